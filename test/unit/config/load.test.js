'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { load, resolveStartConfig } = require('../../../src/config')

let dir
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-load-'))
  fs.writeFileSync(path.join(dir, 'app.js'), '')
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

function write (name, text) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

test('a CommonJS module exporting { apps }', async () => {
  const file = write('object.config.js', 'module.exports = { apps: [{ script: "app.js" }] }')
  expect(await load(file)).toEqual({ apps: [{ script: 'app.js' }] })
})

test('a module exporting a function, sync or async', async () => {
  expect(await load(write('fn.config.js', 'module.exports = () => ({ apps: [{ script: "a.js" }] })')))
    .toEqual({ apps: [{ script: 'a.js' }] })
  expect(await load(write('async.config.cjs', 'module.exports = async () => ({ apps: [{ script: "b.js" }] })')))
    .toEqual({ apps: [{ script: 'b.js' }] })
})

test('JSON', async () => {
  expect(await load(write('httpsys.json', '{ "apps": [{ "script": "app.js" }] }'))).toEqual({ apps: [{ script: 'app.js' }] })
})

test('a missing file is ERR_HTTPSYS_CONFIG_NOT_FOUND with the path and the way out', async () => {
  const file = path.join(dir, 'nope.config.js')
  await expect(load(file)).rejects.toMatchObject({
    code: 'ERR_HTTPSYS_CONFIG_NOT_FOUND',
    path: file,
    message: expect.stringContaining('httpsys start app.js')
  })
})

test.each([
  ['a syntax error', 'syntax.config.js', 'module.exports = { apps: [ }', /Unexpected token/],
  ['a throwing module', 'throws.config.js', 'throw new Error("no DB_URL")', /no DB_URL/],
  ['a throwing function', 'throwsfn.config.js', 'module.exports = () => { throw new Error("nope") }', /nope/],
  ['broken JSON', 'broken.json', '{ apps: ', /JSON/]
])('%s is ERR_HTTPSYS_CONFIG_LOAD naming the file, with the cause', async (what, name, text, cause) => {
  const file = write(name, text)
  const err = await load(file).catch((e) => e)
  expect(err.code).toBe('ERR_HTTPSYS_CONFIG_LOAD')
  expect(err.message).toContain(file)
  expect(err.message).toMatch(cause)
  expect(err.cause.message).toMatch(cause) // the user's own error, for its stack
})

test('resolveStartConfig: a config file resolves paths from its own directory', async () => {
  write('httpsys.config.js', 'module.exports = { apps: [{ name: "x", script: "app.js" }] }')
  const config = await resolveStartConfig({}, { cwd: dir })
  expect(config.apps[0]).toMatchObject({ name: 'x', script: path.join(dir, 'app.js'), cwd: dir })
  const sub = fs.mkdtempSync(path.join(dir, 'sub-'))
  const again = await resolveStartConfig({ config: path.join('..', 'httpsys.config.js') }, { cwd: sub })
  expect(again.apps[0].script).toBe(path.join(dir, 'app.js'))
})

test('resolveStartConfig: a script means one app from the flags', async () => {
  const config = await resolveStartConfig({ script: 'app.js', instances: 3 }, { cwd: dir })
  expect(config.apps).toHaveLength(1)
  expect(config.apps[0]).toMatchObject({ name: 'app', instances: 3 })
})

// issue 23: a promise that never settles left node nothing to wait for, and `httpsys
// start` exited 0 without a word (a service manager then saw a clean stop)
describe('what the config exports must settle in time', () => {
  test.each([
    ['an exported promise', 'promise.config.js', 'module.exports = new Promise(() => {})', 'the promise it exports'],
    ['a function\'s promise', 'fnpromise.config.js', 'module.exports = async () => new Promise(() => {})', 'the promise its exported function returned']
    // an ES module's top-level await: test/unit/cli/commands.test.js (jest's vm cannot import() here)
  ])('%s that never settles is ERR_HTTPSYS_CONFIG_TIMEOUT naming the file and the way out', async (what, name, text, which) => {
    const file = write(name, text)
    const started = Date.now()
    const err = await load(file, { timeout: '200ms' }).catch((e) => e)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(err.code).toBe('ERR_HTTPSYS_CONFIG_TIMEOUT')
    expect(err.message).toBe(`The config file ${file} did not finish loading within 200ms: ${which} has not settled. ` +
      'Make it resolve to { apps: [...] } (give what it awaits, a secret store or a network call, a timeout of its own), ' +
      'or, if it needs longer, allow more with HTTPSYS_CONFIG_TIMEOUT (e.g. `HTTPSYS_CONFIG_TIMEOUT=30s`).')
  })

  test('the default is 10 s; one that settles within it loads as before', async () => {
    const file = write('slow.config.js', 'module.exports = new Promise(() => {})')
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] })
    try {
      let settled = null
      const pending = load(file).then(() => { settled = 'resolved' }, (e) => { settled = e })
      await new Promise((resolve) => setImmediate(resolve))
      jest.advanceTimersByTime(9999)
      await new Promise((resolve) => setImmediate(resolve))
      expect(settled).toBe(null)
      jest.advanceTimersByTime(1)
      await pending
      expect(settled).toMatchObject({ code: 'ERR_HTTPSYS_CONFIG_TIMEOUT', message: expect.stringContaining('within 10s') })
    } finally {
      jest.useRealTimers()
    }
    const later = write('later.config.js', 'module.exports = new Promise((resolve) => setTimeout(() => resolve({ apps: [{ script: "a.js" }] }), 50))')
    expect(await load(later, { timeout: '2s' })).toEqual({ apps: [{ script: 'a.js' }] })
  })

  test('HTTPSYS_CONFIG_TIMEOUT that is no duration is ERR_HTTPSYS_CONFIG_INVALID naming it', async () => {
    const file = write('ok.config.js', 'module.exports = { apps: [] }')
    await expect(load(file, { timeout: 'soon' })).rejects.toMatchObject({
      code: 'ERR_HTTPSYS_CONFIG_INVALID',
      message: expect.stringMatching(/^Invalid config at HTTPSYS_CONFIG_TIMEOUT: must be a duration such as "30s", got "soon"\. Set it to/)
    })
  })
})
