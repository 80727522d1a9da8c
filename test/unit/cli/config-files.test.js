'use strict'

// Config files as projects have them: ESM packages ("type": "module"), .cjs/.mjs/.json
// names found without -c, `export default`, two candidates at once, and every problem of
// a file reported in one run. Real `httpsys` processes: output and exit code are the
// behaviour.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { cli, freePort, get, waitUntil, alive } = require('../../fixtures/apps/harness')

const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'httpsys')

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cfgfiles-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

function run (...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8', timeout: 10000, cwd: dir, env: { ...process.env, HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const write = (name, text) => fs.writeFileSync(path.join(dir, name), text)

describe('an ESM project ("type": "module")', () => {
  beforeEach(() => {
    write('package.json', JSON.stringify({ name: 'shop', type: 'module' }))
    write('app.js', '')
  })

  test('init writes httpsys.config.cjs, which config check then finds and loads', () => {
    const init = run('init')
    expect(init.code).toBe(0)
    expect(init.stdout).toBe(`wrote ${path.join(dir, 'httpsys.config.cjs')}; edit it, then: httpsys config check && httpsys start\n`)
    expect(fs.readFileSync(path.join(dir, 'httpsys.config.cjs'), 'utf8')).toMatch(/^\/\/ httpsys\.config\.cjs: /m)
    const check = run('config', 'check')
    expect(check.stderr).toBe(`${path.join(dir, 'httpsys.config.cjs')}: 1 app(s), valid\n`)
    expect(check.code).toBe(0)
  })

  test('init httpsys.config.js writes it in ESM syntax, which loads there', () => {
    expect(run('init', 'httpsys.config.js').code).toBe(0)
    const text = fs.readFileSync(path.join(dir, 'httpsys.config.js'), 'utf8')
    expect(text).toMatch(/^export default \{/m)
    expect(text).not.toMatch(/module\.exports|'use strict'/)
    expect(run('config', 'check').code).toBe(0)
  })

  test('an export default config in httpsys.config.js loads', () => {
    write('httpsys.config.js', 'export default { apps: [{ name: "esm", script: "app.js" }] }\n')
    const check = run('config', 'check')
    expect(check.code).toBe(0)
    expect(JSON.parse(check.stdout).apps[0].name).toBe('esm')
  })
})

test.each([
  ['httpsys.config.mjs', 'export default { apps: [{ name: "m", script: "app.js" }] }'],
  ['httpsys.config.cjs', 'module.exports = { apps: [{ name: "c", script: "app.js" }] }'],
  ['httpsys.config.json', '{ "apps": [{ "name": "j", "script": "app.js" }] }']
])('%s is found without -c', (name, text) => {
  write('app.js', '')
  write(name, text)
  const check = run('config', 'check')
  expect(check.code).toBe(0)
  expect(check.stderr).toBe(`${path.join(dir, name)}: 1 app(s), valid\n`)
})

test('two config files in one folder: start names both and the way out, and starts nothing', () => {
  write('app.js', '')
  write('httpsys.config.js', 'module.exports = { apps: [{ script: "app.js" }] }')
  write('httpsys.config.mjs', 'export default { apps: [{ script: "app.js" }] }')
  const r = run('start')
  expect(r.code).toBe(1)
  expect(r.stderr).toMatch(/has 2 config files \(httpsys\.config\.js, httpsys\.config\.mjs\)\. Keep one, or choose with -c <file>\./)
  expect(run('config', 'check', '-c', 'httpsys.config.mjs').code).toBe(0)
})

test('every problem of a file in one run, the first one leading', () => {
  write('app.js', '')
  write('httpsys.config.js', `module.exports = {
    metrics: { listen: 'x' },
    apps: [
      { script: 'app.js', instance: 2, kill_timeout: '10 hours', watch: 'true' },
      { name: 'b' }
    ]
  }`)
  const r = run('config', 'check')
  expect(r.code).toBe(1)
  const lines = r.stderr.trim().split('\n')
  expect(lines[0]).toMatch(/Invalid config at apps\[0\]\.instance: is not a known key\. Did you mean "instances"\?/)
  expect(lines[1]).toBe('Also (4 more):')
  expect(lines.slice(2, 6).map((l) => l.replace(/:.*/, ''))).toEqual([
    '  at apps[0].kill_timeout', '  at apps[0].watch', '  at apps[1].script', '  at metrics.listen'
  ])
  expect(r.stderr).toMatch(/\(ERR_HTTPSYS_CONFIG_INVALID\)/)
})

test('the supervisor of an .mjs project is this folder\'s for ls and stop', async () => {
  const port = await freePort()
  write('app.js', 'require("node:http").createServer((q, s) => s.end("ok")).listen(process.env.PORT)\n')
  write('httpsys.config.mjs', `export default { apps: [{ name: 'm', script: 'app.js', urls: ['http://127.0.0.1:${port}/'] }] }\n`)
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const started = await cli(['start', '-d'], { env, cwd: dir })
  expect(started.code).toBe(0)
  const pid = Number(/\(pid (\d+)\)/.exec(started.stdout)[1])
  try {
    expect((await get(port, '/')).body).toBe('ok')
    const ls = JSON.parse((await cli(['ls', '--json'], { env, cwd: dir })).stdout)
    expect(ls.map((s) => s.config)).toEqual([path.join(dir, 'httpsys.config.mjs')])
    expect((await cli(['stop', 'all'], { env, cwd: dir })).code).toBe(0)
    expect(await waitUntil(() => !alive(pid), 10000)).toBe(true)
  } finally {
    if (alive(pid)) process.kill(pid, 'SIGKILL')
  }
}, 30000)
