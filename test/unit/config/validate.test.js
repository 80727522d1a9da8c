'use strict'

// Config validation: what a user reads when their config is wrong. Every error names the
// key path and says how to fix it.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { validate, fromFlags } = require('../../../src/config')

// made at load time: the tables below use it
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-config-'))
fs.writeFileSync(path.join(dir, 'app.js'), '')
fs.writeFileSync(path.join(dir, 'api.js'), '')
fs.mkdirSync(path.join(dir, 'sub'))
fs.writeFileSync(path.join(dir, 'sub', 'web.js'), '')
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const check = (raw) => () => validate(raw, { baseDir: dir })
const app = (extra) => ({ apps: [{ script: 'app.js', ...extra }] })

describe('rejects with the key path and the fix', () => {
  test.each([
    // [what, config, key, words the message must contain]
    ['unknown key, a typo', app({ instance: 2 }), 'apps[0].instance', ['not a known key', 'Did you mean "instances"?']],
    ['unknown key, singular url', app({ url: 'http://+:8080/' }), 'apps[0].url', ['Did you mean "urls"?']],
    ['unknown key, camelCase', app({ killTimeout: 100 }), 'apps[0].killTimeout', ['Did you mean "kill_timeout"?']],
    ['unknown key, pm2 spelling', app({ prefix: 'http://+:8080/' }), 'apps[0].prefix', ['Did you mean "urls"?']],
    ['unknown key, nothing close', app({ zzzzzz: 1 }), 'apps[0].zzzzzz', ['not a known key', 'Remove it (`httpsys init` writes a file listing every key of an app).']],
    ['unknown top-level key', { apps: [{ script: 'app.js' }], app: [] }, 'app', ['Did you mean "apps"?']],
    ['no apps', {}, 'apps', ['is required', 'apps: [{ script: "app.js" }]']],
    ['apps not an array', { apps: { script: 'app.js' } }, 'apps', ['must be an array', 'an object']],
    ['empty apps', { apps: [] }, 'apps', ['lists no app', 'Add at least one']],
    ['an app that is not an object', { apps: ['app.js'] }, 'apps[0]', ['must be an object', '"app.js"']],
    ['missing script', { apps: [{ name: 'x' }] }, 'apps[0].script', ['is required', 'Add script: "app.js"']],
    ['script not a string', app({ script: 3 }), 'apps[0].script', ['non-empty string', 'number 3', 'script: "app.js"']],
    ['instances 0', app({ instances: 0 }), 'apps[0].instances', ['integer >= 1 or "max"', 'number 0', 'instances: 2']],
    ['instances fractional', app({ instances: 1.5 }), 'apps[0].instances', ['number 1.5']],
    ['instances a word', app({ instances: 'all' }), 'apps[0].instances', ['"all"', 'instances: "max"']],
    ['instances past the bound', app({ instances: 5000 }), 'apps[0].instances', ['must be at most 1024, got number 5000', 'a node process of its own', 'instances: "max"']],
    ['instances past the bound, as digits', app({ instances: '1025' }), 'apps[0].instances', ['must be at most 1024, got "1025"']],
    ['args not a list', app({ args: 5 }), 'apps[0].args', ['string or an array of strings', 'args: ["--verbose"']],
    ['args with a number', app({ args: ['--port', 3000] }), 'apps[0].args[1]', ['must be a string', 'Quote it: "3000"']],
    ['node_args an object', app({ node_args: {} }), 'apps[0].node_args', ['string or an array of strings']],
    ['env an array', app({ env: ['A=1'] }), 'apps[0].env', ['must be an object', 'env: { NODE_ENV: "production" }']],
    ['env value an object', app({ env: { A: { b: 1 } } }), 'apps[0].env.A', ['string, number or boolean']],
    ['env name with =', app({ env: { 'A=B': '1' } }), 'apps[0].env["A=B"]', ['not a valid environment variable name']],
    ['cwd missing', app({ cwd: 'nope' }), 'apps[0].cwd', ['does not exist', path.join(dir, 'nope')]],
    ['name with a space', app({ name: 'my app' }), 'apps[0].name', ['letters, digits', 'name: "api"']],
    ['kill_timeout unit', app({ kill_timeout: '10 hours' }), 'apps[0].kill_timeout', ['must be a duration', 'kill_timeout: "10s"']],
    ['kill_timeout negative', app({ kill_timeout: -1 }), 'apps[0].kill_timeout', ['must be a duration']],
    ['bad prefix (no port)', app({ urls: ['http://+/'] }), 'apps[0].urls[0]', ['"http://+/" is not a URL prefix', 'port', 'for example http://+:8080/api/']],
    ['bad prefix (scheme)', app({ urls: 'ftp://+:21/' }), 'apps[0].urls', ['not a URL prefix', 'http or https']],
    ['urls a number', app({ urls: 8080 }), 'apps[0].urls', ['URL prefix or an array']],
    ['type unknown', app({ type: 'cron' }), 'apps[0].type', ['"cron"', 'web', 'worker']],
    ['type worker with urls', app({ type: 'worker', urls: ['http://+:8080/'] }), 'apps[0].type', ['serves no HTTP', 'Remove its urls']],
    ['watch as the string "true"', app({ watch: 'true' }), 'apps[0].watch', ['without quotes', 'Write watch: true.']],
    ['duplicate names', { apps: [{ script: 'app.js', name: 'a' }, { script: 'api.js', name: 'a' }] }, 'apps[1].name', ['"a" is already the name of apps[0]']],
    ['duplicate default names', { apps: [{ script: 'app.js' }, { script: 'app.js' }] }, 'apps[1].name', ['"app" is already the name']],
    ['one prefix on two apps', {
      apps: [
        { script: 'app.js', name: 'one', urls: ['http://+:8080/x/'] },
        { script: 'api.js', name: 'two', urls: ['http://+:9090/', 'HTTP://+:8080/x'] }
      ]
    }, 'apps[1].urls[1]', ['http://+:8080/x/ is used by both app "one" and app "two"', 'own prefix']]
  ])('%s', (what, raw, key, words) => {
    let err
    try {
      check(raw)()
    } catch (e) {
      err = e
    }
    expect(err).toBeDefined()
    expect(err.code).toBe('ERR_HTTPSYS_CONFIG_INVALID')
    expect(err.key).toBe(key)
    expect(err.message).toContain(`Invalid config at ${key}: `)
    for (const w of words) expect(err.message).toContain(w)
  })
})

test('a script that does not exist is ERR_HTTPSYS_SCRIPT_NOT_FOUND naming the file and the app', () => {
  expect(check({ apps: [{ name: 'api', script: 'missing.js' }] })).toThrow(expect.objectContaining({
    code: 'ERR_HTTPSYS_SCRIPT_NOT_FOUND',
    script: path.join(dir, 'missing.js'),
    message: expect.stringContaining('(app "api")')
  }))
})

test('a config that is not an object says what to export', () => {
  expect(check([{ script: 'app.js' }])).toThrow(/must be an object, got an array.*module\.exports/)
})

test('defaults: name from the script, no urls, one instance, cwd of the config, the documented supervisor defaults', () => {
  const config = validate({ apps: [{ script: 'app.js' }] }, { baseDir: dir })
  expect(config).toEqual({
    backend: 'auto',
    apps: [{
      name: 'app',
      script: path.join(dir, 'app.js'),
      cwd: dir,
      urls: [],
      redirect_http: null,
      cache: [],
      auth: null,
      promote_server_vars: [],
      instances: 1,
      args: [],
      node_args: [],
      env: {},
      kill_timeout: 10000,
      restart: 'always',
      stop_exit_codes: [],
      backoff: { initial: 200, max: 30000, factor: 2, jitter: 0.2, reset_after: 60000 },
      min_uptime: 5000,
      max_restarts: 10,
      restart_window: 750000, // 'auto': 10 x (30 s + 30 s + 10 s + 5 s)
      type: 'web',
      wait_ready: false,
      ready_timeout: 30000,
      listen_timeout: 30000,
      max_memory_restart: 0,
      watch: [],
      ignore_watch: [],
      watch_delay: 300,
      log_dir: null,
      log_max_size: 10 * 1024 * 1024,
      log_daily: false,
      log_keep: 5
    }],
    limits: {
      queue_length: 1000,
      max_body_size: 100 * 1024 * 1024,
      header_timeout: 60000,
      idle_timeout: 5000,
      cache_size: 64 * 1024 * 1024,
      cache_max_response: 256 * 1024,
      body_timeout: 120000,
      queue_timeout: 120000,
      max_connections: 0
    },
    tls: [],
    metrics: null
  })
})

test('normalises: script relative to cwd, strings to lists, env values to strings, prefixes, "max"', () => {
  const config = validate({
    apps: [{
      name: 'web',
      cwd: 'sub',
      script: 'web.js',
      urls: 'HTTP://+:8080/Site',
      instances: 'max',
      args: '--a  b',
      node_args: '--no-warnings --max-old-space-size=64',
      env: { N: 1, B: true, S: 's' }
    }]
  }, { baseDir: dir })
  const [web] = config.apps
  expect(web.cwd).toBe(path.join(dir, 'sub'))
  expect(web.script).toBe(path.join(dir, 'sub', 'web.js'))
  expect(web.urls).toEqual(['http://+:8080/Site/'])
  expect(web.instances).toBe(os.availableParallelism())
  expect(web.args).toEqual(['--a', 'b'])
  expect(web.node_args).toEqual(['--no-warnings', '--max-old-space-size=64'])
  expect(web.env).toEqual({ N: '1', B: 'true', S: 's' })
})

test.each([
  [2500, 2500],
  ['2500', 2500],
  ['750ms', 750],
  ['10s', 10000],
  ['1.5s', 1500],
  ['2m', 120000],
  [0, 0]
])('kill_timeout %p is %p ms', (value, ms) => {
  expect(validate(app({ kill_timeout: value }), { baseDir: dir }).apps[0].kill_timeout).toBe(ms)
})

test('the result is frozen: nobody downstream edits it by accident', () => {
  const config = validate(app({ args: ['x'], env: { A: '1' } }), { baseDir: dir })
  expect(Object.isFrozen(config)).toBe(true)
  expect(Object.isFrozen(config.apps[0])).toBe(true)
  expect(Object.isFrozen(config.apps[0].args)).toBe(true)
  expect(Object.isFrozen(config.apps[0].env)).toBe(true)
})

test('"max" on a machine with more than 1024 CPUs is 1024 instances', () => {
  const cpus = jest.spyOn(os, 'availableParallelism').mockReturnValue(4096)
  try {
    expect(validate(app({ instances: 'max' }), { baseDir: dir }).apps[0].instances).toBe(1024)
  } finally {
    cpus.mockRestore()
  }
})

test('the same prefix listed twice in one app is kept once', () => {
  expect(validate(app({ urls: ['http://+:8080/', 'http://+:8080'] }), { baseDir: dir }).apps[0].urls).toEqual(['http://+:8080/'])
})

describe('from `httpsys start` flags', () => {
  test('one app; the script is relative to the shell, errors name the flag', () => {
    const config = fromFlags({ script: 'sub/web.js', urls: ['http://+:8080/'], instances: 2, nodeArgs: '--no-warnings', args: ['x'] }, { baseDir: dir })
    expect(config.apps[0]).toMatchObject({
      name: 'web', script: path.join(dir, 'sub', 'web.js'), cwd: dir, urls: ['http://+:8080/'], instances: 2, node_args: ['--no-warnings'], args: ['x']
    })
    expect(() => fromFlags({ script: 'app.js', urls: ['http://+/'] }, { baseDir: dir }))
      .toThrow(/^Invalid --url: "http:\/\/\+\/" is not a URL prefix/)
    expect(() => fromFlags({ script: 'app.js', name: 'a b' }, { baseDir: dir }))
      .toThrow(/Invalid --name: .*For example --name api\./)
    expect(() => fromFlags({ script: 'app.js', cwd: 'nope' }, { baseDir: dir }))
      .toThrow(/Invalid --cwd: directory .*nope does not exist/)
  })

  test('--instances past 1024 names the flag and the way out (issue 23)', () => {
    expect(() => fromFlags({ script: 'app.js', instances: 5000 }, { baseDir: dir }))
      .toThrow(/^Invalid --instances: must be at most 1024, got number 5000\. .*--instances max runs one per CPU/)
    expect(fromFlags({ script: 'app.js', instances: 1024 }, { baseDir: dir }).apps[0].instances).toBe(1024)
  })

  test('a script name that is not a valid app name gives a usable default name', () => {
    fs.writeFileSync(path.join(dir, 'my app!.js'), '')
    expect(fromFlags({ script: 'my app!.js' }, { baseDir: dir }).apps[0].name).toBe('my-app-')
  })
})

describe('backend: which router runs the apps', () => {
  test('auto by default; the file can choose one; --backend wins over the file', () => {
    expect(validate(app(), { baseDir: dir })).toMatchObject({ backend: 'auto', source: { backend: 'default' } })
    expect(validate({ backend: 'hub', ...app() }, { baseDir: dir })).toMatchObject({ backend: 'hub', source: { backend: 'config' } })
    expect(validate({ backend: 'hub', ...app() }, { baseDir: dir, backend: 'httpsys' })).toMatchObject({ backend: 'httpsys', source: { backend: '--backend' } })
    expect(fromFlags({ script: 'app.js', backend: 'hub' }, { baseDir: dir })).toMatchObject({ backend: 'hub', source: { backend: '--backend' } })
  })

  test('an unknown backend names the key and the choices', () => {
    expect(check({ backend: 'iis', ...app() })).toThrow(/^Invalid config at backend: must be one of "auto", "httpsys", "hub", got "iis"\. For example backend: "auto"\./)
    expect(() => validate(app(), { baseDir: dir, backend: 'nginx' })).toThrow(/^Invalid --backend: must be one of auto, httpsys, hub, got "nginx"/)
    expect(check({ backnd: 'hub', ...app() })).toThrow(/at backnd: is not a known key\. Did you mean "backend"\?/)
  })
})

describe('limits and tls (the router, the same on the hub and HTTP.SYS)', () => {
  const base = { apps: [{ script: 'app.js' }] }
  test('durations become whole seconds; sizes are parsed; unknown keys are named', () => {
    const config = validate({ ...base, limits: { header_timeout: '1500ms', max_body_size: '1M', queue_length: 50 } }, { baseDir: dir })
    expect(config.limits).toMatchObject({ header_timeout: 2000, max_body_size: 1024 * 1024, queue_length: 50 })
    expect(() => validate({ ...base, limits: { queue_lenght: 5 } }, { baseDir: dir })).toThrow(/limits\.queue_lenght: is not a known key\. Did you mean "queue_length"\?/)
  })

  test.each([
    ['header_timeout', '500ms'],
    ['idle_timeout', 0],
    ['body_timeout', '19h'],
    ['queue_timeout', 'soon']
  ])('%s %p is out of HTTP.SYS\'s 16-bit seconds range: a config error naming the key', (key, value) => {
    expect(() => validate({ ...base, limits: { [key]: value } }, { baseDir: dir })).toThrow(new RegExp(`limits\\.${key}: must be`))
  })

  test('max_connections above HTTP.SYS\'s ULONG range is refused at config check, not at start', () => {
    expect(() => validate({ ...base, limits: { max_connections: 5e9 } }, { baseDir: dir })).toThrow(/limits\.max_connections: must be at most 4294967294/)
    expect(validate({ ...base, limits: { max_connections: 4294967294 } }, { baseDir: dir }).limits.max_connections).toBe(4294967294)
  })

  test('queue_length above 65535 is refused', () => {
    expect(() => validate({ ...base, limits: { queue_length: 70000 } }, { baseDir: dir })).toThrow(/limits\.queue_length: must be at most 65535/)
  })

  test('tls entries need a port and exactly one certificate source; paths resolve against the config', () => {
    const config = validate({ ...base, tls: [{ port: 443, host: 'Example.com', pfx: 'site.pfx', passphrase: 'x' }] }, { baseDir: dir })
    expect(config.tls).toEqual([{ port: 443, host: 'example.com', pfx: path.join(dir, 'site.pfx'), passphrase: 'x' }])
    expect(() => validate({ ...base, tls: [{ pfx: 'a.pfx' }] }, { baseDir: dir })).toThrow(/tls\[0\]\.port: is required/)
    expect(() => validate({ ...base, tls: [{ port: 443, cert: 'a.pem' }] }, { baseDir: dir })).toThrow(/tls\[0\]\.key: is required with cert/)
    expect(() => validate({ ...base, tls: [{ port: 443, thumbprint: 'ab', pfx: 'a.pfx' }] }, { baseDir: dir })).toThrow(/exactly one certificate source/)
  })
})
