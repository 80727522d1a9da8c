'use strict'

// pm2's ecosystem file runs as it is (issue 28): its keys that mean something here are
// mapped, each one that does not is dropped with one warning line saying why, and a
// real mistake is one line per key, with "did you mean" only when something is close.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { validate, resolveStartConfig, fromFlags } = require('../../../src/config')

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'pm2', 'ecosystem.config.js')
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-pm2-'))
fs.writeFileSync(path.join(dir, 'app.js'), '')
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const one = (extra) => validate({ apps: [{ script: 'app.js', name: 'api', ...extra }] }, { baseDir: dir })
const problem = (fn) => {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('did not throw')
}

test('an ecosystem file from pm2\'s documentation is valid as it is: warnings only, one line each', async () => {
  const config = await resolveStartConfig({ config: FIXTURE })
  expect(config.apps.map((a) => a.name)).toEqual(['api-app', 'web'])
  const warnings = config.source.warnings
  for (const w of warnings) expect(w).not.toMatch(/\n/)
  // each ignored key once, with its reason; keys that mean the same here say nothing
  expect(warnings.map((w) => /^([\w[\].]+)/.exec(w)[1])).toEqual([
    'deploy',
    'apps[0].exec_mode',
    'apps[0].instance_var',
    'apps[0].log_date_format',
    'apps[0].error_file',
    'apps[0].pid_file',
    'apps[0].cron_restart',
    'apps[0].post_update',
    'apps[1].filter_env'
  ])
  expect(warnings).toContain('apps[0].exec_mode (app api-app): ignored: every instance takes requests from the app\'s one queue, so fork and cluster mode are the same here')
  const logs = path.join(path.dirname(FIXTURE), 'logs')
  expect(warnings).toContain(`apps[0].error_file (app api-app): written as ${path.join(logs, 'api-app.log')} instead: ` +
    `one JSON record per line, stdout and stderr together (log_dir: ${JSON.stringify(logs)})`)
  const [api, web] = config.apps
  expect(api).toMatchObject({
    instances: 2,
    args: ['--color'],
    // interpreter_args, and source_map_support's node flag
    node_args: ['--max-old-space-size=256', '--enable-source-maps'],
    log_dir: logs,
    restart: 'always',
    backoff: { initial: 1000, max: 1000, factor: 1, jitter: 0 },
    kill_timeout: 1600,
    wait_ready: true,
    env: { NODE_ENV: 'development' }
  })
  // pm2's port is the app's PORT; autorestart: false; pm2's exponential backoff curve
  expect(web).toMatchObject({ restart: 'never', backoff: { initial: 100, max: 15000, factor: 1.5, reset_after: 30000 } })
  expect(web.env.PORT).toMatch(/^\d+$/)
})

test('mapped keys: httpsys\'s own key wins when both are there, and says so', () => {
  const c = one({ autorestart: false, restart: 'on-failure', interpreter_args: '--inspect', node_args: ['--trace-warnings'], restart_delay: 500, backoff: { initial: 50 } })
  expect(c.apps[0]).toMatchObject({ restart: 'on-failure', node_args: ['--trace-warnings'], backoff: { initial: 50 } })
  expect(c.source.warnings).toEqual([
    'apps[0].autorestart (app api): ignored: restart is set ("on-failure")',
    'apps[0].interpreter_args (app api): ignored: node_args is set, and it is the same thing',
    'apps[0].restart_delay (app api): ignored: backoff is set'
  ])
})

test('a key set to false that asks for nothing httpsys lacks is not mentioned', () => {
  const c = one({ vizion: false, force: false, shutdown_with_message: false, treekill: true, merge_logs: true, time: true, autorestart: true })
  expect(c.source.warnings).toEqual([])
  expect(c.apps[0].restart).toBe('always')
})

test('interpreter: node runs, anything else is one line naming the key', () => {
  expect(one({ interpreter: 'node' }).apps[0].node).toBeUndefined()
  const err = problem(() => one({ interpreter: '/usr/bin/python3' }))
  expect(err.message).toBe('Invalid config at apps[0].interpreter: is "/usr/bin/python3", but httpsys runs node apps only. ' +
    'Remove it (apps run on node), or run that program another way.')
})

test('five mistakes are five lines: no list of every key, "did you mean" only when close', () => {
  const err = problem(() => one({ instance: 2, wacth: true, zzzz: 1, qqqqqq: 2, colour: 'red' }))
  const lines = err.message.split('\n')
  expect(lines).toEqual([
    'Invalid config at apps[0].instance: is not a known key. Did you mean "instances"?',
    'Also (4 more):',
    '  at apps[0].wacth: is not a known key. Did you mean "watch"?',
    '  at apps[0].zzzz: is not a known key. Remove it (`httpsys init` writes a file listing every key of an app).',
    '  at apps[0].qqqqqq: is not a known key. Remove it (`httpsys init` writes a file listing every key of an app).',
    '  at apps[0].colour: is not a known key. Remove it (`httpsys init` writes a file listing every key of an app).'
  ])
  expect(err.message).not.toMatch(/Known keys/)
})

test('exec_mode is not taken for a misspelt instances any more', () => {
  const c = one({ exec_mode: 'cluster_mode' })
  expect(c.source.warnings).toEqual([expect.stringMatching(/^apps\[0\]\.exec_mode \(app api\): ignored: /)])
})

describe('max_memory_restart: a minimum, and the unit a bare number probably meant', () => {
  test.each([
    [300, 'Invalid config at apps[0].max_memory_restart: must be at least 64M (node with the preload takes about 50M before the app loads anything), got number 300 bytes. Did you mean max_memory_restart: "300M"?'],
    ['10M', 'Invalid config at apps[0].max_memory_restart: must be at least 64M (node with the preload takes about 50M before the app loads anything), got "10M". For example max_memory_restart: "300M" (0 turns it off).']
  ])('%p', (value, message) => {
    expect(problem(() => one({ max_memory_restart: value })).message).toBe(message)
  })

  test('0 (off) and 64M and up are fine; the flag says --max-memory-restart 300M', () => {
    expect(one({ max_memory_restart: 0 }).apps[0].max_memory_restart).toBe(0)
    expect(one({ max_memory_restart: '64M' }).apps[0].max_memory_restart).toBe(64 * 1024 * 1024)
    expect(problem(() => fromFlags({ script: 'app.js', maxMemoryRestart: '300' }, { baseDir: dir })).message)
      .toMatch(/^Invalid --max-memory-restart: must be at least 64M .* Did you mean --max-memory-restart 300M\?$/)
  })
})

test('a flag\'s problem names the flag, not a config path', () => {
  expect(problem(() => fromFlags({ script: 'app.js', urls: ['http://+/'] }, { baseDir: dir })).message).toMatch(/^Invalid --url: "http:\/\/\+\/" is not a URL prefix/)
  expect(problem(() => fromFlags({ script: 'app.js', metrics: 'nine' }, { baseDir: dir })).message)
    .toBe('Invalid --metrics: must be "host:port", ":port" or a port number from 1 to 65535, got "nine". For example --metrics 127.0.0.1:9464.')
})

test('pm2\'s log files: the first names log_dir, one in another folder is said to be unused, and log_dir wins over them', () => {
  const c = one({ out_file: './logs/out.log', log_file: './logs/all.log', error_file: './other/err.log' })
  expect(c.apps[0].log_dir).toBe(path.join(dir, 'logs'))
  expect(c.source.warnings).toEqual([
    `apps[0].out_file (app api): written as ${path.join(dir, 'logs', 'api.log')} instead: one JSON record per line, ` +
      `stdout and stderr together (log_dir: ${JSON.stringify(path.join(dir, 'logs'))})`,
    `apps[0].error_file (app api): ignored: every record of the app goes to ${path.join(dir, 'logs')} (one file per app)`
  ])
  const own = one({ log_dir: './mine', out_file: './logs/out.log', error_file: './logs/err.log' })
  expect(own.apps[0].log_dir).toBe(path.join(dir, 'mine'))
  expect(own.source.warnings).toEqual([
    'apps[0].out_file (app api): ignored: log_dir is set',
    'apps[0].error_file (app api): ignored: log_dir is set'
  ])
})
