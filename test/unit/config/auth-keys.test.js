'use strict'

// An app's auth and promote_server_vars keys as `httpsys config check` and `start` take
// them (src/config/auth-keys.js): normalised, every mistake named with its key and fix,
// and the warnings (Basic on http://, Digest) said once.

const path = require('node:path')
const { validate } = require('../../../src/config/validate')

const ROOT = path.join(__dirname, '..', '..', '..')
const check = (keys, urls = ['https://+:8443/']) => validate({ apps: [{ name: 'intranet', script: 'package.json', urls, ...keys }] }, { baseDir: ROOT })
const failure = (keys, urls) => {
  try {
    check(keys, urls)
  } catch (err) {
    return err
  }
  throw new Error('no error')
}

test('normalised: scheme names in any case, the documented defaults (anonymous as ASP.NET\'s AllowAnonymous)', () => {
  const { auth, promote_server_vars: vars } = check({ auth: { schemes: ['Negotiate', 'NTLM', 'ntlm'] }, promote_server_vars: 'auth_user, AUTH_TYPE' }).apps[0]
  expect(auth).toEqual({ schemes: ['negotiate', 'ntlm'], anonymous: true, realm: null, domain: null, basic_over_http: false, kerberos_credential_caching: false, dev_identity: null })
  expect(vars).toEqual(['AUTH_USER', 'AUTH_TYPE'])
})

test('a development identity: a name, or { user, sid, groups }, with made-up SIDs that stay the same', () => {
  const one = check({ auth: { schemes: ['ntlm'], dev_identity: 'DEV\\alice' } }).apps[0].auth.dev_identity
  const two = check({ auth: { schemes: ['ntlm'], dev_identity: { user: 'DEV\\alice', sid: 's-1-5-21-1-2-3-500', groups: ['DEV\\Staff', { name: 'BUILTIN\\Users', sid: 'S-1-5-32-545' }] } } }).apps[0].auth.dev_identity
  expect(one).toEqual({ user: 'DEV\\alice', sid: expect.stringMatching(/^S-1-5-21-0-0-0-\d+$/), groups: [] })
  expect(two).toEqual({ user: 'DEV\\alice', sid: 'S-1-5-21-1-2-3-500', groups: [{ name: 'DEV\\Staff', sid: expect.stringMatching(/^S-1-5-21-0-0-0-\d+$/) }, { name: 'BUILTIN\\Users', sid: 'S-1-5-32-545' }] })
  expect(check({ auth: { schemes: ['ntlm'], dev_identity: 'DEV\\alice' } }).apps[0].auth.dev_identity.sid).toBe(one.sid)
})

test.each([
  ['no schemes', { auth: {} }, 'apps[0].auth.schemes', /is required\. For example schemes: \["negotiate", "ntlm"\]/],
  ['a misspelt scheme', { auth: { schemes: ['ntml'] } }, 'apps[0].auth.schemes[0]', /must be one of "negotiate", "kerberos", "ntlm", "basic", "digest", got "ntml"\. Did you mean "ntlm"\?/],
  ['an unknown key', { auth: { schemes: ['ntlm'], anonymus: false } }, 'apps[0].auth.anonymus', /is not a known key\. Did you mean "anonymous"\?/],
  ['a realm without basic or digest', { auth: { schemes: ['ntlm'], realm: 'x' } }, 'apps[0].auth.realm', /applies to the basic and digest schemes only/],
  ['a realm that breaks the quoted challenge', { auth: { schemes: ['basic'], realm: 'a"b' } }, 'apps[0].auth.realm', /must not hold a double quote/],
  ['credential caching without Kerberos', { auth: { schemes: ['ntlm'], kerberos_credential_caching: true } }, 'apps[0].auth.kerberos_credential_caching', /needs "negotiate" or "kerberos"/],
  ['a dev identity SID that is not one', { auth: { schemes: ['ntlm'], dev_identity: { user: 'DEV\\a', sid: 'alice' } } }, 'apps[0].auth.dev_identity.sid', /must be a SID/],
  ['a dev identity without a user', { auth: { schemes: ['ntlm'], dev_identity: { groups: [] } } }, 'apps[0].auth.dev_identity.user', /is required/],
  ['a server variable httpsys does not promote', { promote_server_vars: ['AUTH_USER', 'REMOTE_ADDR'] }, 'apps[0].promote_server_vars[1]', /must be one of AUTH_USER, AUTH_TYPE, LOGON_USER, REMOTE_USER, got "REMOTE_ADDR"/],
  ['auth on an app that serves no HTTP', { type: 'worker', auth: { schemes: ['ntlm'] } }, 'apps[0].auth', /app of type "worker"/]
])('%s is refused, naming the key', (what, keys, key, words) => {
  const err = failure(keys, keys.type === 'worker' ? [] : undefined)
  expect(err.code).toBe('ERR_HTTPSYS_CONFIG_INVALID')
  expect(err.key).toBe(key)
  expect(err.message).toMatch(words)
})

test('basic is refused on http:// prefixes (the password goes readable), unless basic_over_http says so, with a warning', () => {
  const err = failure({ auth: { schemes: ['negotiate', 'basic'] } }, ['http://+:8080/'])
  expect(err.key).toBe('apps[0].auth.schemes')
  expect(err.message).toMatch(/has "basic", which sends the password readable by anyone on the path, and the app has http:\/\/ prefixes \(http:\/\/\+:8080\/\)\. Serve the app on https:\/\/ prefixes only, or, on a network you trust, say so with basic_over_http: true/)
  const config = check({ auth: { schemes: ['basic'], basic_over_http: true } }, ['http://+:8080/'])
  expect(config.source.warnings).toEqual([expect.stringMatching(/^apps\[0\]\.auth \(app intranet\): basic_over_http: Basic sends each password readable by anyone on the path to http:\/\/\+:8080\/$/)])
  expect(check({ auth: { schemes: ['basic'] } }).source.warnings).toEqual([])
})

test('digest passes with a warning that httpsys\'s tests do not cover it', () => {
  expect(check({ auth: { schemes: ['digest'], realm: 'R', domain: '/' } }).source.warnings).toEqual([expect.stringMatching(/digest is HTTP\.SYS's WDigest/)])
})
