'use strict'

// Which router a run gets, and why (the start log shows the reason): auto means HTTP.SYS
// only on Windows with a loadable addon and prefixes for every app; asking for httpsys
// where it cannot run fails before anything starts.

const path = require('node:path')
const { validate, fromFlags } = require('../../../src/config')
const { codes } = require('../../../src/errors')
const { chooseBackend } = require('../../../src/supervisor/backend-choice')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')

const config = (backend, apps = [{ script: 'graceful.js', urls: ['http://+:8080/'] }]) =>
  validate({ ...(backend ? { backend } : {}), apps }, { baseDir: APPS })
const loads = () => ({})
const fails = () => {
  throw new codes.ERR_HTTPSYS_NATIVE_UNAVAILABLE({ attempts: [{ path: 'C:\\x\\httpsys_native.node', error: 'not found' }] })
}

describe('auto', () => {
  test('off Windows: the hub, without even looking for the addon', () => {
    const loadNative = jest.fn()
    expect(chooseBackend(config(), { platform: 'linux', loadNative })).toEqual({ backend: 'hub', reason: 'not Windows' })
    expect(loadNative).not.toHaveBeenCalled()
  })

  test('Windows with the addon and urls everywhere: HTTP.SYS', () => {
    expect(chooseBackend(config('auto'), { platform: 'win32', loadNative: loads }))
      .toEqual({ backend: 'httpsys', reason: 'Windows, and the HTTP.SYS addon loads' })
  })

  test('Windows without the addon: the hub, with the loader\'s message kept as detail', () => {
    const choice = chooseBackend(config(), { platform: 'win32', loadNative: fails })
    expect(choice).toMatchObject({ backend: 'hub', fallback: true, reason: expect.stringMatching(/addon did not load/) })
    expect(choice.detail).toMatch(/C:\\x\\httpsys_native\.node: not found/)
    expect(choice.fix).toMatch(/reinstall httpsys-cli .*npx node-gyp rebuild.*--backend hub/)
  })

  test('Windows, but an app leaves its prefix to listen(): the hub, naming the app', () => {
    const c = config(undefined, [{ name: 'api', script: 'graceful.js', urls: ['http://+:8080/api/'] }, { name: 'web', script: 'graceful.js' }])
    expect(chooseBackend(c, { platform: 'win32', loadNative: loads })).toEqual({
      backend: 'hub',
      fallback: true,
      reason: 'app "web" has no urls (HTTP.SYS needs them before the app starts)',
      fix: 'give every app urls (urls: ["http://+:8080/"]) to run on HTTP.SYS; to use the hub on purpose, pass --backend hub.'
    })
  })
})

describe('asked for', () => {
  test('hub: the hub everywhere, saying who asked', () => {
    expect(chooseBackend(config('hub'), { platform: 'win32', loadNative: loads }))
      .toEqual({ backend: 'hub', reason: 'backend: "hub" in the config' })
    expect(chooseBackend(fromFlags({ script: 'graceful.js', backend: 'hub' }, { baseDir: APPS }), { platform: 'win32' }))
      .toEqual({ backend: 'hub', reason: '--backend hub' })
  })

  test('httpsys off Windows: the loader\'s ERR_HTTPSYS_NATIVE_UNAVAILABLE', () => {
    expect(() => chooseBackend(config('httpsys'), { platform: 'linux' }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_NATIVE_UNAVAILABLE', message: expect.stringMatching(/only on Windows, this is linux.*--backend hub/) }))
  })

  test('httpsys where the addon fails: that error, every path it tried', () => {
    expect(() => chooseBackend(config('httpsys'), { platform: 'win32', loadNative: fails }))
      .toThrow(/Tried: C:\\x\\httpsys_native\.node: not found/)
  })

  test('httpsys with a script and no --url: the error names the flag', () => {
    const c = fromFlags({ script: 'graceful.js', backend: 'httpsys' }, { baseDir: APPS })
    expect(() => chooseBackend(c, { platform: 'win32', loadNative: loads }))
      .toThrow(expect.objectContaining({
        code: 'ERR_HTTPSYS_CONFIG_INVALID',
        key: '--url',
        message: expect.stringMatching(/^Invalid --url: app "graceful" has no URL prefix.*--url http:\/\/\+:8080\/, or use --backend hub/)
      }))
    expect(chooseBackend(fromFlags({ script: 'graceful.js', backend: 'httpsys', urls: ['http://+:8080/'] }, { baseDir: APPS }), { platform: 'win32', loadNative: loads }))
      .toEqual({ backend: 'httpsys', reason: '--backend httpsys' })
  })
})
