'use strict'

// The commands besides start, as a user meets them: init, config check, and the
// control commands when no supervisor runs. Real processes: output and exit code are
// the behaviour.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'httpsys')

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cmd-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

function run (...args) {
  const env = typeof args[0] === 'object' ? args.shift() : {}
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8', timeout: 10000, cwd: dir, env: { ...process.env, HTTPSYS_RUNTIME_DIR: path.join(dir, 'run'), ...env }
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

test('init writes the commented template; config check validates it and prints it resolved', () => {
  const init = run('init')
  expect(init.code).toBe(0)
  expect(init.stdout).toBe(`wrote ${path.join(dir, 'httpsys.config.js')}; edit it, then: httpsys config check && httpsys start\n`)
  expect(fs.readFileSync(path.join(dir, 'httpsys.config.js'), 'utf8')).toContain('max_memory_restart')
  // a second init: the file is there, not a broken config (issue 28)
  const again = run('init')
  expect(again.code).toBe(1)
  expect(again.stderr).toBe(`httpsys: ${path.join(dir, 'httpsys.config.js')} exists already: httpsys init left it as it is. ` +
    'Edit it (`httpsys config check` validates it), or replace it with the template: `httpsys init --force`. (ERR_HTTPSYS_CONFIG_EXISTS)\n')
  expect(run('init', '--force').code).toBe(0)

  // the template's script must exist before it runs
  expect(run('config', 'check').stderr).toMatch(/The app script .*app\.js does not exist.*ERR_HTTPSYS_SCRIPT_NOT_FOUND/)
  fs.writeFileSync(path.join(dir, 'app.js'), '')
  const check = run('config', 'check', '--env', 'production')
  expect(check.code).toBe(0)
  const { apps } = JSON.parse(check.stdout)
  expect(apps[0]).toMatchObject({
    name: 'web',
    script: path.join(dir, 'app.js'),
    kill_timeout: 10000,
    env: { NODE_ENV: 'production' },
    backoff: { initial: 200, max: 30000 },
    watch: [],
    log_dir: null
  })
  expect(check.stderr).toBe(`${path.join(dir, 'httpsys.config.js')}: 1 app(s), valid\n`)
})

test('config check masks values that look secret unless --show-secrets', () => {
  fs.writeFileSync(path.join(dir, 'app.js'), '')
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = {
    tls: [{ port: 443, pfx: 'site.pfx', passphrase: 'hunter2' }, { port: 8443, cert: 'site.crt', key: '-----BEGIN PRIVATE KEY-----\\nMIIEvQ-secret\\n-----END PRIVATE KEY-----\\n' }],
    apps: [{ script: 'app.js', env: { API_TOKEN: 'tok-123', DB_PASSWORD: 'pw', STRIPE_SECRET_KEY: 'sk', DATABASE_URL_DSN: 'postgres://u:p@h/db', NODE_ENV: 'production', PORT_HINT: '8080' } }]
  }`)
  const masked = run('config', 'check')
  expect(masked.code).toBe(0)
  expect(masked.stdout).not.toMatch(/tok-123|"pw"|"sk"|hunter2|u:p@h|MIIEvQ-secret/)
  const { apps, tls } = JSON.parse(masked.stdout)
  expect(apps[0].env).toMatchObject({ API_TOKEN: expect.stringMatching(/^\*\*\*/), NODE_ENV: 'production', PORT_HINT: '8080' })
  expect(tls[0].passphrase).toMatch(/^\*\*\* \(--show-secrets prints it\)$/)
  // a key given as PEM text is a secret; a path is not
  expect(tls[1].key).toMatch(/^\*\*\*/)
  expect(tls[1].cert).toBe(path.join(dir, 'site.crt'))
  const shown = JSON.parse(run('config', 'check', '--show-secrets').stdout)
  expect(shown.apps[0].env).toMatchObject({ API_TOKEN: 'tok-123', DB_PASSWORD: 'pw', STRIPE_SECRET_KEY: 'sk' })
  expect(shown.tls[0].passphrase).toBe('hunter2')
})

test('config check masks credentials inside URLs and arguments too (issue 23)', () => {
  fs.writeFileSync(path.join(dir, 'app.js'), '')
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [{
    script: 'app.js',
    env: { DATABASE_URL: 'postgres://shop:pg-s3cret@db.internal:5432/shop', CACHE: 'redis://:rd-s3cret@cache:6379/0', BLOB: 'https://acct.blob.core.windows.net/c?sv=2022&sig=sas-s3cret', HOME_PAGE: 'https://example.com/' },
    args: ['--api-key=ak-s3cret', '--password', 'pw-s3cret', '--port', '3000', '--db=mysql://root:my-s3cret@h/x', '--verbose'],
    node_args: ['--max-old-space-size=512']
  }] }`)
  const masked = run('config', 'check')
  expect(masked.code).toBe(0)
  expect(masked.stdout).not.toMatch(/s3cret/)
  const { apps } = JSON.parse(masked.stdout)
  // what is not secret stays readable: the user, host and database, the flag's name
  expect(apps[0].env).toEqual({
    DATABASE_URL: 'postgres://shop:***@db.internal:5432/shop',
    CACHE: 'redis://:***@cache:6379/0',
    BLOB: 'https://acct.blob.core.windows.net/c?sv=2022&sig=***',
    HOME_PAGE: 'https://example.com/'
  })
  expect(apps[0].args).toEqual(['--api-key=***', '--password', '***', '--port', '3000', '--db=mysql://root:***@h/x', '--verbose'])
  expect(apps[0].node_args).toEqual(['--max-old-space-size=512'])
  const shown = JSON.parse(run('config', 'check', '--show-secrets').stdout)
  expect(shown.apps[0].env.DATABASE_URL).toBe('postgres://shop:pg-s3cret@db.internal:5432/shop')
  expect(shown.apps[0].args[0]).toBe('--api-key=ak-s3cret')
})

test('config check rejects a typo with the key it meant', () => {
  fs.writeFileSync(path.join(dir, 'app.js'), '')
  fs.writeFileSync(path.join(dir, 'my.config.js'), 'module.exports = { apps: [{ script: "app.js", max_memroy_restart: "300M" }] }')
  const r = run('config', 'check', '-c', 'my.config.js')
  expect(r.code).toBe(1)
  expect(r.stdout).toBe('')
  expect(r.stderr).toMatch(/^httpsys: Invalid config at apps\[0\]\.max_memroy_restart: is not a known key\. Did you mean "max_memory_restart"\?/)
})

// issue 23: node exited 0 once nothing but the config's promise was left, so a service
// manager saw a clean stop and restarted nothing
describe('a config whose export never settles: exit 1 with the file and the fix, not a silent 0', () => {
  const timedOut = (r, file, which) => {
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`httpsys: The config file ${path.join(dir, file)} did not finish loading within 300ms: ${which} has not settled. ` +
      'Make it resolve to { apps: [...] } (give what it awaits, a secret store or a network call, a timeout of its own), ' +
      'or, if it needs longer, allow more with HTTPSYS_CONFIG_TIMEOUT (e.g. `HTTPSYS_CONFIG_TIMEOUT=30s`). (ERR_HTTPSYS_CONFIG_TIMEOUT)\n')
  }
  const runWith = (...args) => run({ HTTPSYS_CONFIG_TIMEOUT: '300ms' }, ...args)

  test.each(['config check', 'start', 'start -d'])('httpsys %s', (command) => {
    fs.writeFileSync(path.join(dir, 'httpsys.config.js'), 'module.exports = new Promise(() => {})\n')
    timedOut(runWith(...command.split(' ')), 'httpsys.config.js', 'the promise it exports')
  })

  test('an ES module\'s top-level await, and a config that also holds a handle open (a socket it waits on)', () => {
    fs.writeFileSync(path.join(dir, 'tla.config.mjs'), 'await new Promise(() => {})\nexport default { apps: [] }\n')
    timedOut(runWith('config', 'check', '-c', 'tla.config.mjs'), 'tla.config.mjs', 'its top-level await')
    fs.writeFileSync(path.join(dir, 'held.config.js'), 'setInterval(() => {}, 1000)\nmodule.exports = async () => new Promise(() => {})\n')
    timedOut(runWith('start', '-c', 'held.config.js'), 'held.config.js', 'the promise its exported function returned')
  })
})

test('control commands with no supervisor running say how to start one; ls says nothing runs (exit 0, [] as JSON)', () => {
  for (const args of [['reload', 'api'], ['logs'], ['stop'], ['stop', 'all'], ['stop', 'all', '--all-supervisors']]) {
    const r = run(...args)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^httpsys: No running httpsys supervisor .*was found.*\. Start one with `httpsys start`.*\(ERR_HTTPSYS_NOT_RUNNING\)\n$/)
  }
  expect(run('ls')).toMatchObject({ code: 0, stdout: 'no httpsys supervisor is running (start one with `httpsys start`)\n' })
  expect(run('ls', '--json')).toMatchObject({ code: 0, stdout: '[]\n' })
})

test.each([
  ['reload without an app', ['reload'], /missing required argument 'app'/],
  ['logs with a bad count', ['logs', '--lines', 'many'], /argument 'many' is invalid\. It must be a whole number/],
  ['--env with a script', ['start', 'app.js', '--env', 'prod'], /--env selects the env_<name> blocks of a config file/],
  ['watch paths with a config', ['start', '-c', 'x.config.js', '--watch', 'src'], /--watch <paths> cannot be combined with a config file/]
])('%s is a usage error (exit 2)', (what, args, message) => {
  const r = run(...args)
  expect(r.code).toBe(2)
  expect(r.stderr).toMatch(message)
})

test('every command has help with its options', () => {
  const help = run('--help').stdout
  for (const cmd of ['ls', 'reload', 'restart', 'stop', 'logs', 'init', 'config']) expect(help).toMatch(new RegExp(`\\n  ${cmd}[ |]`))
  expect(run('logs', '--help').stdout).toContain('-f, --follow')
  expect(run('start', '--help').stdout).toContain('-w, --watch [paths]')
})
