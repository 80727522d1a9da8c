'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const loader = require('../../../src/httpsys/loader')

describe('httpsys addon loader', () => {
  test('nothing is loaded off Windows: one coded error says why', () => {
    expect(() => loader.load({ platform: 'linux', dlopen: () => ({}) }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_NATIVE_UNAVAILABLE', reason: expect.stringMatching(/only on Windows/) }))
  })

  test('from a checkout, the package\'s own prebuilds/ and build/ (what npm run build:win and node-gyp write)', () => {
    const root = path.join(__dirname, '..', '..', '..')
    const list = loader.candidates({ env: {}, platform: 'win32', arch: 'x64', execPath: path.join(os.tmpdir(), 'node.exe'), inSea: false, bundleDir: null })
    expect(list).toEqual(expect.arrayContaining([
      path.join(root, 'prebuilds', 'win32-x64', 'httpsys_native.node'),
      path.join(root, 'build', 'Release', 'httpsys_native.node')
    ]))
  })

  test('HTTPSYS_NATIVE_PATH is tried first', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-loader-'))
    const file = path.join(dir, 'custom.node')
    fs.writeFileSync(file, '')
    try {
      const opened = []
      const binding = loader.load({
        platform: 'win32',
        env: { HTTPSYS_NATIVE_PATH: file },
        dlopen: (f) => { opened.push(f); return { marker: true } }
      })
      expect(binding).toEqual({ marker: true })
      expect(opened).toEqual([file])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a failure lists every attempt and the fix', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-loader-'))
    const file = path.join(dir, 'broken.node')
    fs.writeFileSync(file, '')
    try {
      let err
      try {
        loader.load({
          platform: 'win32',
          arch: 'x64',
          env: { HTTPSYS_NATIVE_PATH: file },
          execPath: path.join(dir, 'httpsys.exe'),
          dlopen: () => { throw new Error('not a valid Win32 application') }
        })
      } catch (e) {
        err = e
      }
      expect(err.code).toBe('ERR_HTTPSYS_NATIVE_UNAVAILABLE')
      expect(err.attempts[0]).toEqual({ path: file, error: 'not a valid Win32 application' })
      expect(err.attempts.map((a) => a.path)).toEqual(expect.arrayContaining([
        path.join(dir, 'httpsys_native-win32-x64.node'),
        expect.stringMatching(/prebuilds[\\/]win32-x64[\\/]httpsys_native\.node$/),
        expect.stringMatching(/build[\\/]Release[\\/]httpsys_native\.node$/),
        expect.stringMatching(/build[\\/]Debug[\\/]httpsys_native\.node$/)
      ]))
      expect(err.message).toMatch(/npm run build:win/)
      expect(err.message).toContain(file)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test('inside the single executable its own copy (in the per-build cache) is tried after the override, and no source tree', () => {
    const list = loader.candidates({
      platform: 'win32',
      arch: 'x64',
      env: { HTTPSYS_CACHE_DIR: path.join(os.tmpdir(), 'httpsys-cache') },
      execPath: 'C:\\apps\\httpsys.exe',
      inSea: true,
      bundleDir: 'C:\\apps'
    })
    expect(path.dirname(path.dirname(list[0]))).toBe(path.join(os.tmpdir(), 'httpsys-cache'))
    expect(path.basename(list[0])).toBe('httpsys_native.node')
    expect(list[1]).toMatch(/httpsys_native-win32-x64\.node$/)
    expect(list.some((p) => /prebuilds|Release|Debug/.test(p))).toBe(false)
  })

  test('the preload bundle under the user\'s node looks next to itself, where the executable wrote the addon', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-loader-'))
    fs.writeFileSync(path.join(dir, 'httpsys_native.node'), '')
    try {
      const opened = []
      loader.load({
        platform: 'win32',
        env: {},
        execPath: path.join(os.tmpdir(), 'node.exe'),
        inSea: false,
        bundleDir: dir,
        dlopen: (f) => { opened.push(f); return {} }
      })
      expect(opened).toEqual([path.join(dir, 'httpsys_native.node')])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test('an executable without the addon says so in the attempt', () => {
    let err
    try {
      loader.load({ platform: 'win32', arch: 'arm64', env: { HTTPSYS_CACHE_DIR: os.tmpdir() }, execPath: path.join(os.tmpdir(), 'x', 'h.exe'), inSea: true, dlopen: () => ({}) })
    } catch (e) {
      err = e
    }
    expect(err.code).toBe('ERR_HTTPSYS_NATIVE_UNAVAILABLE')
    expect(err.attempts[0].error).toMatch(/carries no httpsys_native-win32-arm64\.node/)
  })

  test('isAvailable never throws', () => {
    expect(loader.isAvailable({ platform: 'linux' })).toBe(false)
  })
})
