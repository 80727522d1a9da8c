'use strict'

// Windows authentication on HTTP.SYS, against the fake addon (README "Windows
// authentication"): the property the controller sets from the config, the identity a
// request's access token becomes (authenticated, failed, anonymous), anonymous: false's
// 401 with the challenges, the challenges on the app's own 401s, promote_server_vars and
// forged x-iisnode-* headers, and the token of every request closed when it ends,
// whatever ends it (counted over 10k requests).

const path = require('node:path')
const { createBackend } = require('../../../src/queue/httpsys')
const { validate } = require('../../../src/config/validate')
const { authEnv } = require('../../../src/windows-auth')
const { clearNameCache } = require('../../../src/queue/windows-identity')
const { createFakeAddon, fakeRequest, EVENT } = require('../../helpers/fake-addon')

const ROOT = path.join(__dirname, '..', '..', '..')
const ALICE = 'S-1-5-21-7-7-7-1104'
const STAFF = 'S-1-5-21-7-7-7-2001'
const OLD = 'S-1-5-21-7-7-7-2002' // a group the token holds for deny only
const LOGON = 'S-1-5-5-0-12345' // the logon session's SID
const SE_GROUP_ENABLED = 4

/** A validated app (src/config) with these keys, as the supervisor hands its workers. */
function app (keys) {
  return validate({ apps: [{ name: 'intranet', script: 'package.json', urls: ['https://+:8443/'], ...keys }] }, { baseDir: ROOT }).apps[0]
}

let saved
beforeEach(() => {
  saved = process.env.HTTPSYS_AUTH
  clearNameCache()
})
afterEach(() => {
  if (saved === undefined) delete process.env.HTTPSYS_AUTH
  else process.env.HTTPSYS_AUTH = saved
})

async function attached (keys) {
  const binding = createFakeAddon()
  binding.addAccount('CONTOSO\\alice', ALICE)
  binding.addAccount('CONTOSO\\Staff', STAFF)
  binding.addAccount('CONTOSO\\Old Staff', OLD)
  binding.addAccount('BUILTIN\\Users', 'S-1-5-32-545')
  const env = authEnv(app(keys))
  if (env === undefined) delete process.env.HTTPSYS_AUTH
  else process.env.HTTPSYS_AUTH = env
  const seen = []
  const handlers = {
    onRequest: (req) => seen.push(req),
    onAbort: (id) => seen.push(['abort', id])
  }
  const attachment = await createBackend(() => binding, { log () {} }).attach({ urls: ['https://+:8443/'], handlers })
  const queue = binding.queues[binding.queues.length - 1]
  const token = () => queue.issueToken({
    user: ALICE,
    groups: [STAFF, 'S-1-5-32-545', { name: OLD, attributes: 0x10 }, { name: LOGON, attributes: 0xc0000000 | SE_GROUP_ENABLED }]
  })
  return { binding, queue, attachment, seen, token }
}

const authenticated = (token, scheme = 'NTLM') => ({ status: 'success', scheme, secStatus: 0, cachedCredentials: false, token })
const headerOf = (raw, name) => { for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name) return raw[i + 1] }
const headersNamed = (raw, name) => raw.filter((_, i) => i % 2 === 1 && raw[i - 1].toLowerCase() === name)

describe('the controller: HttpServerAuthenticationProperty from the config, on the app\'s URL groups', () => {
  test.each([
    ['negotiate and ntlm', { schemes: ['negotiate', 'ntlm'], anonymous: false }, { schemes: ['ntlm', 'negotiate'], basicRealm: null, kerberosCredentialCaching: false }],
    ['basic with its realm', { schemes: ['basic'], realm: 'Intranet' }, { schemes: ['basic'], basicRealm: 'Intranet', digestRealm: null }],
    ['kerberos with credential caching', { schemes: ['kerberos'], kerberos_credential_caching: true }, { schemes: ['kerberos'], kerberosCredentialCaching: true }],
    ['digest with realm and domain', { schemes: ['digest'], realm: 'Intranet', domain: '/intranet/' }, { schemes: ['digest'], digestRealm: 'Intranet', digestDomain: '/intranet/', basicRealm: null }]
  ])('%s', (what, auth, expected) => {
    const binding = createFakeAddon()
    createBackend(() => binding).createQueue('httpsys-1-intranet', { urls: ['https://+:8443/'], auth: app({ auth }).auth })
    expect(binding.violations).toEqual([])
    expect(binding.queues[0].kernel.auth).toMatchObject(expected)
    expect(binding.queues[0].kernel.bound).toBe(true)
  })

  test('the supervisor\'s router: the app\'s auth at its queue\'s creation, and a config edit\'s before new workers start', async () => {
    const pino = require('pino')
    const { HttpsysRouter } = require('../../../src/supervisor/httpsys-router')
    const binding = createFakeAddon()
    const router = new HttpsysRouter({ logger: pino({ level: 'silent' }), native: createBackend(() => binding) })
    await router.start()
    await router.createQueue('intranet', { urls: ['https://+:8443/'], auth: app({ auth: { schemes: ['ntlm'] } }).auth })
    const kernel = binding.queues[0].kernel
    expect(kernel.auth.schemes).toEqual(['ntlm'])
    router.setAuth('intranet', app({ auth: { schemes: ['negotiate', 'basic'], realm: 'Intranet' } }).auth)
    expect(kernel.auth).toMatchObject({ schemes: ['basic', 'negotiate'], basicRealm: 'Intranet' })
    router.setAuth('intranet', null)
    expect(kernel.auth).toBe(null)
    expect(binding.violations).toEqual([])
    await router.close()
  })

  test('an app without auth leaves HTTP.SYS\'s authentication off', () => {
    const binding = createFakeAddon()
    createBackend(() => binding).createQueue('httpsys-1-intranet', { urls: ['https://+:8443/'], auth: app({}).auth })
    expect(binding.queues[0].kernel.auth).toBe(null)
  })
})

describe('the identity on the request', () => {
  test('an authenticated request carries its user, SID, scheme and groups (enabled ones, named), read only when asked', async () => {
    const { queue, seen, token } = await attached({ auth: { schemes: ['negotiate', 'ntlm'] } })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: authenticated(token(), 'Negotiate') })])
    const identity = seen[0].identity
    expect(queue.callsOf('tokenUser')).toEqual([]) // nothing read yet
    expect(identity.scheme).toBe('Negotiate')
    expect(identity.name).toBe('CONTOSO\\alice')
    expect(identity.sid).toBe(ALICE)
    expect(identity.groups).toEqual([{ name: 'CONTOSO\\Staff', sid: STAFF }, { name: 'BUILTIN\\Users', sid: 'S-1-5-32-545' }])
    expect(Object.isFrozen(identity.groups)).toBe(true)
    expect(identity.isInRole('CONTOSO\\staff')).toBe(true)
    expect(identity.isInRole('Staff')).toBe(true) // the name in any domain
    expect(identity.isInRole('S-1-5-32-545')).toBe(true)
    expect(identity.isInRole('CONTOSO\\Old Staff')).toBe(false) // deny-only: not a membership
    expect(identity.isInRole(OLD)).toBe(false)
    expect(identity.isInRole(LOGON)).toBe(false)
    expect(JSON.parse(JSON.stringify(identity))).toEqual({ name: 'CONTOSO\\alice', sid: ALICE, scheme: 'Negotiate' })
    expect(queue.callsOf('tokenUser')).toHaveLength(1) // cached per token
    expect(queue.callsOf('tokenGroups')).toHaveLength(1)
  })

  test('a failed or anonymous request has no identity, and with anonymous (the default) still reaches the app', async () => {
    const { queue, seen } = await attached({ auth: { schemes: ['ntlm'] } })
    queue.emit([
      EVENT.REQUEST, 1, fakeRequest(1, { auth: { status: 'failure', scheme: 'NTLM', secStatus: 0x8009030c, token: 0 } }),
      EVENT.REQUEST, 2, fakeRequest(2, { auth: { status: 'notAuthenticated', scheme: null, secStatus: 0, token: 0 } })
    ])
    expect(seen.map((r) => [r.id, r.identity])).toEqual([[1, null], [2, null]])
    expect(queue.callsOf('respond')).toEqual([])
  })

  test('an app without auth gets no identity and no header of its own', async () => {
    const { queue, seen } = await attached({})
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: null, rawHeaders: ['Host', 'intranet', 'X-IISNode-Auth_User', 'forged'] })])
    expect(seen[0].identity).toBe(null)
    expect(seen[0].rawHeaders).toEqual(['Host', 'intranet', 'X-IISNode-Auth_User', 'forged'])
  })

  test('names are looked up once per SID for the process, not per request', async () => {
    const { binding, queue, attachment, seen, token } = await attached({ auth: { schemes: ['ntlm'] } })
    const before = binding.lookups
    for (let id = 1; id <= 50; id++) {
      queue.emit([EVENT.REQUEST, id, fakeRequest(id, { auth: authenticated(token()) })])
      expect(seen[seen.length - 1].identity.name).toBe('CONTOSO\\alice')
      attachment.respond(id, 200, 'OK', [], null, 0, 0)
      queue.emit([EVENT.SENT, id, 0])
    }
    expect(binding.lookups - before).toBe(1)
    expect(queue.callsOf('tokenUser')).toHaveLength(50) // the SID is each token's own
  })
})

describe('anonymous: false', () => {
  test('a request HTTP.SYS did not authenticate gets 401 with the challenges, strongest first; the connection stays for the handshake', async () => {
    const { queue, seen } = await attached({ auth: { schemes: ['ntlm', 'negotiate', 'kerberos'], anonymous: false } })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: { status: 'notAuthenticated', scheme: null, secStatus: 0, token: 0 } })])
    expect(seen).toEqual([])
    const [[id, status, reason, headers, body, flags]] = queue.callsOf('respond')
    expect([id, status, reason, body, flags]).toEqual([1, 401, 'Unauthorized', 'Unauthorized', 0])
    expect(headersNamed(headers, 'www-authenticate')).toEqual(['Kerberos', 'Negotiate', 'NTLM'])
    expect(headerOf(headers, 'connection')).toBeUndefined()
  })

  test('a failed logon is challenged again; an authenticated one reaches the app', async () => {
    const { queue, seen, token } = await attached({ auth: { schemes: ['negotiate'], anonymous: false } })
    queue.emit([
      EVENT.REQUEST, 1, fakeRequest(1, { auth: { status: 'failure', scheme: 'Negotiate', secStatus: 0x8009030c, token: 0 } }),
      EVENT.REQUEST, 2, fakeRequest(2, { auth: authenticated(token(), 'Negotiate') })
    ])
    expect(queue.callsOf('respond').map((c) => [c[0], c[1]])).toEqual([[1, 401]])
    expect(seen.map((r) => r.id)).toEqual([2])
  })

  test('no auth info at all (HTTP.SYS authenticated nothing: Wine) is challenged too', async () => {
    const { queue, seen } = await attached({ auth: { schemes: ['ntlm'], anonymous: false } })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: null })])
    expect(seen).toEqual([])
    expect(queue.callsOf('respond')[0][1]).toBe(401)
  })

  test('Basic names its realm: the configured one, else the host the client asked for', async () => {
    const t = await attached({ auth: { schemes: ['basic', 'ntlm'], anonymous: false } })
    t.queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { rawHeaders: ['Host', 'intranet.contoso.com:8443'], auth: null })])
    expect(headersNamed(t.queue.callsOf('respond')[0][3], 'www-authenticate')).toEqual(['NTLM', 'Basic realm="intranet.contoso.com"'])
    const r = await attached({ auth: { schemes: ['basic'], realm: 'Contoso Intranet', anonymous: false } })
    r.queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: null })])
    expect(headersNamed(r.queue.callsOf('respond')[0][3], 'www-authenticate')).toEqual(['Basic realm="Contoso Intranet"'])
  })
})

describe('the app\'s own 401', () => {
  test('gets the challenges of the app\'s schemes, after its own, never twice', async () => {
    const { queue, attachment } = await attached({ auth: { schemes: ['negotiate', 'ntlm'] } })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: { status: 'notAuthenticated', scheme: null, secStatus: 0, token: 0 } }),
      EVENT.REQUEST, 2, fakeRequest(2, { auth: null })])
    attachment.respond(1, 401, 'Unauthorized', ['Content-Length', '0', 'WWW-Authenticate', 'Bearer'], null, 0, 0)
    attachment.respond(2, 401, 'Unauthorized', ['WWW-Authenticate', 'NTLM'], null, 0, 0)
    const [first, second] = queue.callsOf('respond')
    expect(headersNamed(first[3], 'www-authenticate')).toEqual(['Bearer', 'Negotiate', 'NTLM'])
    expect(headersNamed(second[3], 'www-authenticate')).toEqual(['NTLM', 'Negotiate'])
  })

  test('other statuses, and apps without auth, are left as they are', async () => {
    const t = await attached({ auth: { schemes: ['ntlm'] } })
    t.queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: null })])
    t.attachment.respond(1, 403, 'Forbidden', ['Content-Length', '0'], null, 0, 0)
    expect(t.queue.callsOf('respond')[0][3]).toEqual(['Content-Length', '0'])
    const u = await attached({})
    u.queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: null })])
    u.attachment.respond(1, 401, 'Unauthorized', ['Content-Length', '0'], null, 0, 0)
    expect(u.queue.callsOf('respond')[0][3]).toEqual(['Content-Length', '0'])
  })
})

describe('promote_server_vars', () => {
  test('adds iisnode\'s x-iisnode-* headers for an authenticated request', async () => {
    const { queue, seen, token } = await attached({ auth: { schemes: ['negotiate'] }, promote_server_vars: ['AUTH_USER', 'AUTH_TYPE', 'LOGON_USER', 'REMOTE_USER'] })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: authenticated(token(), 'Negotiate') })])
    expect(seen[0].rawHeaders).toEqual(['Host', 'localhost',
      'x-iisnode-auth_user', 'CONTOSO\\alice', 'x-iisnode-auth_type', 'Negotiate', 'x-iisnode-logon_user', 'CONTOSO\\alice', 'x-iisnode-remote_user', 'CONTOSO\\alice'])
  })

  test('a client\'s own x-iisnode-* headers are dropped, also ones the app does not promote (passport-windowsauth reads x-iisnode-logon_user)', async () => {
    const { queue, seen } = await attached({ auth: { schemes: ['ntlm'] }, promote_server_vars: ['AUTH_USER'] })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, {
      auth: { status: 'notAuthenticated', scheme: null, secStatus: 0, token: 0 },
      rawHeaders: ['Host', 'intranet', 'X-IISNode-Auth_User', 'CONTOSO\\ceo', 'x-iisnode-logon_user', 'CONTOSO\\ceo', 'Accept', '*/*']
    })])
    // anonymous: the variable is there, empty, as iisnode hands it over
    expect(seen[0].rawHeaders).toEqual(['Host', 'intranet', 'Accept', '*/*', 'x-iisnode-auth_user', ''])
  })

  test('works without auth too: every request anonymous, forged headers dropped', async () => {
    const { queue, seen } = await attached({ promote_server_vars: 'AUTH_USER,AUTH_TYPE' })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: null, rawHeaders: ['Host', 'x', 'x-iisnode-auth_user', 'forged'] })])
    expect(seen[0].rawHeaders).toEqual(['Host', 'x', 'x-iisnode-auth_user', '', 'x-iisnode-auth_type', ''])
  })
})

describe('the access token: closed when its request ends, whatever ends it', () => {
  test('after the kernel completed the response, not before (the app\'s \'finish\' listeners may still read the identity)', async () => {
    const { queue, attachment, binding, token } = await attached({ auth: { schemes: ['ntlm'] } })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: authenticated(token()) })])
    attachment.respond(1, 200, 'OK', ['Content-Length', '2'], 'hi', 0, 0)
    expect(binding.openTokens()).toBe(1)
    queue.emit([EVENT.SENT, 1, 0])
    expect(binding.openTokens()).toBe(0)
  })

  test('an identity the app read from keeps what it needs; one it never touched cannot be read once its request is over', async () => {
    const { queue, attachment, seen, token } = await attached({ auth: { schemes: ['ntlm'] } })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { auth: authenticated(token()) }), EVENT.REQUEST, 2, fakeRequest(2, { auth: authenticated(token()) })])
    const [read, untouched] = seen.map((r) => r.identity)
    expect(read.name).toBe('CONTOSO\\alice')
    for (const id of [1, 2]) attachment.respond(id, 200, 'OK', [], null, 0, 0)
    queue.emit([EVENT.SENT, 1, 0, EVENT.SENT, 2, 0])
    expect(read.isInRole('CONTOSO\\Staff')).toBe(true) // groups read as the token went
    expect(read.toJSON()).toEqual({ name: 'CONTOSO\\alice', sid: ALICE, scheme: 'NTLM' })
    expect(() => untouched.name).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_AUTH_TOKEN_CLOSED' }))
    expect(untouched.scheme).toBe('NTLM')
  })

  test('on a client gone, a cancel, a refusal before the app, a 401, and the queue\'s end', async () => {
    const { queue, attachment, binding, token, seen } = await attached({ auth: { schemes: ['ntlm'], anonymous: false } })
    queue.emit([
      EVENT.REQUEST, 1, fakeRequest(1, { auth: authenticated(token()) }),
      EVENT.REQUEST, 2, fakeRequest(2, { auth: authenticated(token()) }),
      EVENT.REQUEST, 3, fakeRequest(3, { method: 'BREW', auth: authenticated(token()) }), // 400 from the worker
      EVENT.REQUEST, 4, fakeRequest(4, { auth: authenticated(token()) })
    ])
    expect(seen.map((r) => r.id)).toEqual([1, 2, 4])
    expect(binding.openTokens()).toBe(3)
    queue.emit([EVENT.ABORT, 1, 1236])
    attachment.cancel(2)
    expect(binding.openTokens()).toBe(1)
    queue.emit([EVENT.CLOSED, 0, 0])
    expect(binding.openTokens()).toBe(0)
  })

  test('none leaks over 10k requests of every kind', async () => {
    const { queue, attachment, binding, token, seen } = await attached({ auth: { schemes: ['ntlm', 'negotiate'], anonymous: false }, promote_server_vars: ['AUTH_USER'] })
    let sent = 0
    for (let id = 1; id <= 10000; id++) {
      const kind = id % 5
      const auth = kind === 4 ? { status: 'notAuthenticated', scheme: null, secStatus: 0, token: 0 } : authenticated(token())
      queue.emit([EVENT.REQUEST, id, fakeRequest(id, { auth, method: kind === 3 ? 'BREW' : 'GET' })])
      if (kind === 0) {
        attachment.respond(id, 200, 'OK', [], 'ok', 0, 0)
        queue.emit([EVENT.SENT, id, 0])
        sent++
      } else if (kind === 1) {
        queue.emit([EVENT.ABORT, id, 1236])
      } else if (kind === 2) {
        attachment.respond(id, 200, 'OK', [], 'part', 1, 0)
        attachment.sendBody(id, 'end', 0)
        queue.emit([EVENT.SENT, id, 0, EVENT.SENT, id, 0])
      } else {
        queue.emit([EVENT.SENT, id, 0]) // the worker's 400 or 401
      }
    }
    expect(sent).toBe(2000)
    expect(seen.filter((r) => r.identity).length).toBe(6000)
    expect(attachment.live.size).toBe(0)
    expect(binding.openTokens()).toBe(0)
  })
})
