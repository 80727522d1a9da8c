'use strict'

// The CLI as a user meets it: help, version, and how usage errors and coded errors end.
// Real processes: what is printed and the exit code are the behaviour.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const pkg = require('../../../package.json')

const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'httpsys')
const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')

function run (...args) {
  const options = typeof args[0] === 'object' ? args.shift() : {}
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 10000, cwd: options.cwd || APPS })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

test('--help shows usage, the start command and examples', () => {
  const { code, stdout } = run('--help')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^Usage: httpsys \[options\] \[command\]/)
  expect(stdout).toMatch(/\n {2}start \[options\] \[script\] \[args\.\.\.\] +run an app/)
  expect(stdout).toContain('-v, --version')
  expect(stdout).toContain('Examples:\n  $ httpsys start app.js')
})

test('start --help lists every option of start', () => {
  const { code, stdout } = run('start', '--help')
  expect(code).toBe(0)
  expect(stdout).toMatch(/^Usage: httpsys start \[options\] \[script\] \[args\.\.\.\]/)
  for (const option of ['-c, --config <file>', '-u, --url <prefix>', '-i, --instances <n>', '-n, --name <name>',
    '--node-args <args>', '--cwd <dir>', '--log-level <level>', '--json', '--backend <router>']) {
    expect(stdout).toContain(option)
  }
  expect(stdout).toContain('Examples:')
  expect(stdout).toContain('httpsys start app.js -- --port 3000')
  expect(stdout).toContain('(choices: "auto", "httpsys", "hub")')
  expect(run('help', 'start').stdout).toBe(stdout)
})

test('--version prints the package version', () => {
  expect(run('--version')).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' })
  expect(run('-v').stdout).toBe(`${pkg.version}\n`)
})

test.each([
  ['an unknown option', ['start', 'x.js', '--nope'], /unknown option '--nope'/],
  ['an unknown command', ['strat'], /unknown command 'strat'/],
  ['a bad instance count', ['start', 'x.js', '-i', '0'], /'-i, --instances <n>' argument '0' is invalid\. It must be an integer >= 1 or "max"/],
  ['a bad log level', ['start', 'x.js', '--log-level', 'loud'], /Allowed choices are trace, debug, info/],
  ['app flags with a config file', ['start', '-c', 'httpsys.config.js', '-u', 'http://+:8080/', '-i', '2'],
    /--url, --instances cannot be combined with a config file \(httpsys\.config\.js\); set these on the app in the config file/],
  ['a script with a config file', ['start', 'app.js', '-c', 'other.config.js'], /a script cannot be combined with a config file/],
  ['app flags without a script', ['start', '--name', 'api'], /--name describes one app and needs its script/]
])('%s is a usage error: exit 2, the reason on stderr', (what, args, message) => {
  const { code, stdout, stderr } = run(...args)
  expect(code).toBe(2)
  expect(stdout).toBe('')
  expect(stderr).toMatch(message)
})

test('a coded error is one line "httpsys: <message> (<code>)" and exit 1', () => {
  const { code, stderr } = run('start', 'does-not-exist.js')
  expect(code).toBe(1)
  expect(stderr).toMatch(/^httpsys: The app script .*does-not-exist\.js does not exist\. .* \(ERR_HTTPSYS_SCRIPT_NOT_FOUND\)\n$/)
})

test('without a script it runs ./httpsys.config.js, and says how to start when there is none', () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cli-'))
  try {
    const { code, stderr } = run({ cwd: empty }, 'start')
    expect(code).toBe(1)
    expect(stderr).toBe(`httpsys: No config file at ${path.join(empty, 'httpsys.config.js')}. ` +
      'Pass a script (`httpsys start app.js`) or a config file (`httpsys start -c httpsys.config.js`). (ERR_HTTPSYS_CONFIG_NOT_FOUND)\n')
  } finally {
    fs.rmSync(empty, { recursive: true, force: true })
  }
})

test('a *.config.js given as the script is run as the config file', () => {
  const { code, stderr } = run('start', 'nothing-here.config.js')
  expect(code).toBe(1)
  expect(stderr).toContain('ERR_HTTPSYS_CONFIG_NOT_FOUND')
})

test('every command\'s --help says what it does (issue 28: `show --help` had no description)', () => {
  const { createProgram } = require('../../../src/cli')
  const missing = []
  const walk = (command, prefix) => {
    for (const sub of command.commands) {
      if (sub._hidden) continue
      const name = `${prefix}${sub.name()}`
      if (sub.description().trim() === '') missing.push(name)
      walk(sub, `${name} `)
    }
  }
  walk(createProgram(), '')
  expect(missing).toEqual([])
  const { stdout } = run('show', '--help')
  expect(stdout.split('\n')[2]).toMatch(/^Show one app of the running supervisor/)
  expect(stdout).toContain('--show-secrets')
})
