'use strict'

// The supervisor's config keys (restart policy, backoff, readiness, memory, watch, log
// files, env_<name>, --env-file, npm shims): unit strings are understood, typos are
// rejected with the key the user meant.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { validate, fromFlags, resolveStartConfig, parseSize, formatSize } = require('../../../src/config')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-keys-'))
fs.writeFileSync(path.join(dir, 'app.js'), '')
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const one = (extra, options = {}) => validate({ apps: [{ script: 'app.js', ...extra }] }, { baseDir: dir, ...options }).apps[0]
const failure = (fn) => {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('did not throw')
}

test('unit strings: durations and sizes', () => {
  const app = one({ min_uptime: '2s', restart_window: '3m', ready_timeout: '1.5s', watch_delay: 50, max_memory_restart: '300M', log_max_size: '1G' })
  expect(app).toMatchObject({ min_uptime: 2000, restart_window: 180000, ready_timeout: 1500, watch_delay: 50, max_memory_restart: 300 * 1024 * 1024, log_max_size: 1024 ** 3 })
  expect(parseSize('512K')).toBe(512 * 1024)
  expect(parseSize('10MB')).toBe(10 * 1024 * 1024)
  expect(parseSize('12 parsecs')).toBeUndefined()
  expect(formatSize(300 * 1024 * 1024)).toBe('300M')
  expect(formatSize(1536)).toBe('1.5K')
})

test.each([
  ['a backoff typo', { backoff: { intial: '1s' } }, 'apps[0].backoff.intial', 'Did you mean "initial"?'],
  ['a pm2 key with a wrong value', { exp_backoff_restart_delay: 'soon' }, 'apps[0].exp_backoff_restart_delay', 'must be a duration'],
  ['autorestart not a boolean', { autorestart: 'no' }, 'apps[0].autorestart', 'must be true or false'],
  ['a watch typo', { wacth: true }, 'apps[0].wacth', 'Did you mean "watch"?'],
  ['ignore_watch typo', { ignore_wacth: ['x'] }, 'apps[0].ignore_wacth', 'Did you mean "ignore_watch"?'],
  ['max_memory', { max_memory: '1G' }, 'apps[0].max_memory', 'Did you mean "max_memory_restart"?'],
  ['a restart mode', { restart: 'sometimes' }, 'apps[0].restart', 'must be one of "always", "on-failure", "never"'],
  ['an exit code', { stop_exit_codes: [0, 'x'] }, 'apps[0].stop_exit_codes[1]', 'must be an exit code'],
  ['a backoff cap below the floor', { backoff: { initial: '2s', max: '1s' } }, 'apps[0].backoff.max', 'is below initial'],
  ['jitter above 1', { backoff: { jitter: 2 } }, 'apps[0].backoff.jitter', 'between 0 and 1'],
  ['a size', { max_memory_restart: 'lots' }, 'apps[0].max_memory_restart', 'For example max_memory_restart: "300M"'],
  ['wait_ready a string', { wait_ready: 'yes' }, 'apps[0].wait_ready', 'must be true or false'],
  ['max_restarts negative', { max_restarts: -1 }, 'apps[0].max_restarts', 'integer >= 0'],
  ['env_<name> not an object', { env_production: 'x' }, 'apps[0].env_production', 'must be an object of variables']
])('rejects %s', (what, extra, key, words) => {
  const err = failure(() => one(extra))
  expect(err.code).toBe('ERR_HTTPSYS_CONFIG_INVALID')
  expect(err.key).toBe(key)
  expect(err.message).toContain(words)
})

test('backoff: given keys override the defaults, the rest stay', () => {
  expect(one({ backoff: { initial: '50ms', factor: 3 } }).backoff).toEqual({ initial: 50, max: 30000, factor: 3, jitter: 0.2, reset_after: 60000 })
})

test('watch: true is the app\'s cwd, paths are relative to it; log_dir is relative to the config', () => {
  fs.mkdirSync(path.join(dir, 'srv'), { recursive: true })
  expect(one({ watch: true }).watch).toEqual([dir])
  expect(one({ cwd: 'srv', script: '../app.js', watch: ['lib', 'conf'] }).watch).toEqual([path.join(dir, 'srv', 'lib'), path.join(dir, 'srv', 'conf')])
  expect(one({ cwd: 'srv', script: '../app.js', log_dir: 'logs' }).log_dir).toBe(path.join(dir, 'logs'))
})

test('env_<name> is merged over env with --env <name>; --env-file goes under both', () => {
  const raw = { env: { A: 'base', B: 'base' }, env_production: { B: 'prod', C: 1 } }
  expect(one(raw).env).toEqual({ A: 'base', B: 'base' })
  expect(one(raw, { envName: 'production' }).env).toEqual({ A: 'base', B: 'prod', C: '1' })
  expect(one(raw, { envName: 'production', envFile: { A: 'file', Z: 'file' } }).env).toEqual({ A: 'base', B: 'prod', C: '1', Z: 'file' })
})

test('--env naming no env_<name> of the config is a typo with a suggestion', () => {
  const err = failure(() => one({ env_production: { A: '1' } }, { envName: 'prodution' }))
  expect(err.key).toBe('--env')
  expect(err.message).toContain('no app has env_prodution. Did you mean --env production? The config defines: env_production.')
})

test('resolveStartConfig reads --env-file and passes --env to a config function', async () => {
  fs.writeFileSync(path.join(dir, 'vars.env'), '# comment\nFROM_FILE="yes please"\nSHARED=file\n')
  fs.writeFileSync(path.join(dir, 'fn.config.js'),
    'module.exports = ({ env }) => ({ apps: [{ script: "app.js", env: { SHARED: "app", WHICH: String(env) } }] })')
  const config = await resolveStartConfig({ config: 'fn.config.js', env: undefined, envFile: 'vars.env' }, { cwd: dir })
  expect(config.apps[0].env).toEqual({ FROM_FILE: 'yes please', SHARED: 'app', WHICH: 'undefined' })
  expect(config.source).toEqual({ configFile: path.join(dir, 'fn.config.js'), backend: 'default', warnings: [] })
  await expect(resolveStartConfig({ script: 'app.js', envFile: 'nope.env' }, { cwd: dir }))
    .rejects.toThrow(/Invalid --env-file: cannot read .*nope\.env \(ENOENT\)/)
})

test('--watch on a config file watches every app that does not say otherwise', () => {
  const config = validate({ apps: [{ script: 'app.js', name: 'a' }, { script: 'app.js', name: 'b', watch: false }] }, { baseDir: dir, watch: true })
  expect(config.apps.map((a) => a.watch)).toEqual([[dir], []])
})

test('flags: errors name the flag', () => {
  expect(() => fromFlags({ script: 'app.js', killTimeout: 'soon' }, { baseDir: dir })).toThrow(/^Invalid --kill-timeout: must be a duration/)
  expect(() => fromFlags({ script: 'app.js', maxMemoryRestart: 'big' }, { baseDir: dir })).toThrow(/For example --max-memory-restart 300M/)
  const app = fromFlags({ script: 'app.js', watch: ['src'], waitReady: true, restart: 'on-failure' }, { baseDir: dir }).apps[0]
  expect(app).toMatchObject({ watch: [path.join(dir, 'src')], wait_ready: true, restart: 'on-failure' })
})

describe('npm shims resolve to the JavaScript they run (no shell between supervisor and app)', () => {
  const pkg = path.join(dir, 'node_modules', 'tool')
  const bin = path.join(dir, 'node_modules', '.bin')
  beforeAll(() => {
    fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true })
    fs.mkdirSync(bin, { recursive: true })
    fs.writeFileSync(path.join(pkg, 'bin', 'tool.js'), '#!/usr/bin/env node\n')
    // what cmd-shim writes on Windows
    fs.writeFileSync(path.join(bin, 'tool.cmd'), '@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n\r\n' +
      'IF EXIST "%dp0%\\node.exe" (\r\n  SET "_prog=%dp0%\\node.exe"\r\n) ELSE (\r\n  SET "_prog=node"\r\n)\r\n\r\n' +
      'endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\..\\tool\\bin\\tool.js" %*\r\n')
    fs.writeFileSync(path.join(bin, 'tool'), '#!/bin/sh\nbasedir=$(dirname "$(echo "$0" | sed -e \'s,\\\\,/,g\')")\n\n' +
      'if [ -x "$basedir/node" ]; then\n  exec "$basedir/node"  "$basedir/../tool/bin/tool.js" "$@"\nelse\n  exec node  "$basedir/../tool/bin/tool.js" "$@"\nfi\n')
    fs.symlinkSync(path.join('..', 'tool', 'bin', 'tool.js'), path.join(bin, 'tool-link'))
    fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/bash\necho hi\n')
  })

  test.each([
    ['a .cmd shim', 'node_modules/.bin/tool.cmd'],
    ['an sh shim', 'node_modules/.bin/tool'],
    ['a symlink', 'node_modules/.bin/tool-link']
  ])('%s', (what, script) => {
    expect(one({ script }).script).toBe(path.join(pkg, 'bin', 'tool.js'))
  })

  test('the app is named after the shim the user gave, not the file it resolves to', () => {
    fs.writeFileSync(path.join(pkg, 'bin', 'index.js'), '')
    fs.symlinkSync(path.join('..', 'tool', 'bin', 'index.js'), path.join(bin, 'mytool'))
    expect(one({ script: 'node_modules/.bin/mytool' })).toMatchObject({ name: 'mytool', script: path.join(pkg, 'bin', 'index.js') })
    expect(one({ script: 'node_modules/.bin/tool.cmd' }).name).toBe('tool')
  })

  test('a shell script is rejected, not run as JavaScript', () => {
    expect(() => one({ script: 'run.sh' })).toThrow(/run\.sh is a shell script, not a JavaScript file node can run/)
  })
})
