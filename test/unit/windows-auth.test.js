'use strict'

// Which router may serve an app with auth (src/windows-auth.js checkRouter, what the
// supervisor asks before it starts anything), and the worker's own refusal on the hub
// (src/queue/auth-gate.js hubGate), which also covers a reload that adds auth.

const path = require('node:path')
const { validate } = require('../../src/config/validate')
const { checkRouter, authEnv, devIdentityFromEnv } = require('../../src/windows-auth')
const { hubGate, httpSysGate } = require('../../src/queue/auth-gate')

const ROOT = path.join(__dirname, '..', '..')
const apps = (auth, env = {}) => validate({ apps: [{ name: 'intranet', script: 'package.json', urls: ['https://+:8443/'], auth, env }] }, { baseDir: ROOT }).apps

describe('checkRouter: the supervisor, before anything starts', () => {
  test('the hub without a development identity: ERR_HTTPSYS_AUTH_UNAVAILABLE naming the app, its schemes and the fix', () => {
    expect(() => checkRouter(apps({ schemes: ['negotiate'] }), { backend: 'hub', reason: 'not Windows' }, {}))
      .toThrow(expect.objectContaining({
        code: 'ERR_HTTPSYS_AUTH_UNAVAILABLE',
        message: expect.stringMatching(/^App "intranet" asks for Windows authentication \(auth: negotiate\), which only HTTP\.SYS does, and it would run on the native router \(not Windows\): .*auth\.dev_identity: \{ user: 'DEV\\\\alice' \}.*HTTPSYS_DEV_IDENTITY=DEV\\alice.*not authentication/)
      }))
  })

  test('the hub with one (the config\'s, the app\'s env, or httpsys\'s): a warning per app', () => {
    const hub = { backend: 'hub', reason: 'not Windows' }
    expect(checkRouter(apps({ schemes: ['ntlm'], dev_identity: 'DEV\\a' }), hub, {})).toEqual([expect.stringMatching(/every request carries the development identity DEV\\a \(auth\.dev_identity\)/)])
    expect(checkRouter(apps({ schemes: ['ntlm'] }, { HTTPSYS_DEV_IDENTITY: 'DEV\\b' }), hub, {})).toEqual([expect.stringMatching(/DEV\\b \(HTTPSYS_DEV_IDENTITY\)/)])
    expect(checkRouter(apps({ schemes: ['ntlm'] }), hub, { HTTPSYS_DEV_IDENTITY: 'DEV\\c' })).toEqual([expect.stringMatching(/DEV\\c/)])
  })

  test('Windows\' fallback to the hub (the addon did not load) never hands out the development identity', () => {
    const fallback = { backend: 'hub', fallback: true, reason: 'the HTTP.SYS addon did not load', fix: 'reinstall httpsys-cli' }
    expect(() => checkRouter(apps({ schemes: ['ntlm'], dev_identity: 'DEV\\a' }), fallback, {}))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_AUTH_UNAVAILABLE', message: expect.stringMatching(/HTTP\.SYS could not be used: the HTTP\.SYS addon did not load\).*reinstall httpsys-cli.*only when --backend hub asks for the native router/) }))
  })

  test('HTTP.SYS: served; a development identity is said to be ignored', () => {
    expect(checkRouter(apps({ schemes: ['ntlm'] }), { backend: 'httpsys' }, {})).toEqual([])
    expect(checkRouter(apps({ schemes: ['ntlm'] }), { backend: 'httpsys' }, { HTTPSYS_DEV_IDENTITY: 'DEV\\a' })).toEqual([expect.stringMatching(/ignored on HTTP\.SYS/)])
  })

  test('a malformed HTTPSYS_DEV_IDENTITY is a config error naming the variable', () => {
    expect(() => devIdentityFromEnv('{"user": 1}')).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'HTTPSYS_DEV_IDENTITY.user' }))
    expect(() => devIdentityFromEnv('{nope')).toThrow(/HTTPSYS_DEV_IDENTITY: is not valid JSON/)
  })
})

describe('the worker on the hub (hubGate)', () => {
  const worker = (auth, more = {}) => ({ HTTPSYS_AUTH: authEnv(apps(auth)[0]), HTTPSYS_HUB: '/tmp/x.sock', HTTPSYS_APP: 'intranet', ...more })

  test('an app with auth and no development identity does not attach', () => {
    expect(() => hubGate(worker({ schemes: ['ntlm'] }))).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_AUTH_UNAVAILABLE', app: 'intranet' }))
  })

  test('with one, every request carries it, and is never challenged', () => {
    const gate = hubGate(worker({ schemes: ['ntlm'], anonymous: false, dev_identity: 'DEV\\a' }))
    const req = { rawHeaders: ['Host', 'x'] }
    gate.admit(req, null)
    expect(req.identity.name).toBe('DEV\\a')
    expect(gate.challengesAnonymous).toBe(false)
    expect(gate.withChallenges(401, [], [])).toEqual([]) // nothing on the hub could answer one
  })

  test('under a supervisor HTTPSYS_DEV_IDENTITY alone gives apps without auth nothing; standalone it is every request\'s', () => {
    expect(hubGate({ HTTPSYS_HUB: '/tmp/x.sock', HTTPSYS_DEV_IDENTITY: 'DEV\\a' })).toBe(null)
    const req = { rawHeaders: [] }
    hubGate({ HTTPSYS_DEV_IDENTITY: 'DEV\\a' }).admit(req, null)
    expect(req.identity.toJSON()).toEqual({ name: 'DEV\\a', sid: expect.any(String), scheme: 'Development' })
  })

  test('an HTTPSYS_AUTH the supervisor did not write is refused', () => {
    expect(() => hubGate({ HTTPSYS_AUTH: '{"auth":{"schemes":["bearer"]},"promote":[]}' })).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'HTTPSYS_AUTH' }))
    expect(() => httpSysGate({ HTTPSYS_AUTH: 'x' })).toThrow(expect.objectContaining({ key: 'HTTPSYS_AUTH' }))
  })
})
