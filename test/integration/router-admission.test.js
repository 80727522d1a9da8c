'use strict'

// Who may attach to which queue of a supervisor's hub. The worker socket is the user's
// own (0600), but any process of the user reaching it could, before, join any app's
// queue (receiving its requests, Authorization headers included), register a longer
// prefix inside another app's URL space, or open a new port. Now: an app's queue admits
// only workers with its token, a supervisor's hub lets no worker create a queue, and
// only an app without urls lets its first instance choose the prefix. On the native
// router (router/, issue 25; the JS hub, src/hub, ran it too until it was removed).

const { startWorker, reply, request } = require('../helpers/hub-harness')
const { ROUTERS, queueNames } = require('../helpers/routers')

describe.each(ROUTERS)('%s: a supervisor\'s router (workersMayCreate: false)', (name, start) => {
  let hub
  let port
  const workers = []
  beforeAll(async () => {
    hub = await start({ workersMayCreate: false })
    ;({ ports: [port] } = await hub.createQueue('api', { urls: ['http://127.0.0.1:0/api/'], token: 'api-token' }))
    await hub.createQueue('web', { urls: [`http://127.0.0.1:${port}/`], token: 'web-token' })
    await hub.createQueue('bare', { urls: [], token: 'bare-token' })
  })
  afterAll(async () => {
    for (const w of workers) w.att.close()
    await hub.close()
  })
  const worker = async (opts) => {
    const w = await startWorker(hub, { handle: (req, body, w) => reply(w, req, 200, `${opts.queue} ${req.url}`), ...opts })
    workers.push(w)
    return w
  }

  test('a worker without its app\'s token, or with another app\'s, is refused; with it, it serves', async () => {
    await expect(worker({ queue: 'api' })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_ATTACH_DENIED', queue: 'api' })
    await expect(worker({ queue: 'api', token: 'web-token' })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_ATTACH_DENIED' })
    const api = await worker({ queue: 'api', token: 'api-token' })
    const res = await request(port, { path: '/api/me', headers: { Authorization: 'Bearer secret' } })
    expect(res.body.toString()).toBe('api /api/me')
    expect(api.requests).toHaveLength(1)
  })

  test('no worker creates a queue: not a named one, not an anonymous one with a longer prefix inside another app', async () => {
    await expect(worker({ queue: 'rogue', urls: [`http://127.0.0.1:${port}/api/admin/`] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_QUEUE_NOT_FOUND' })
    await expect(worker({ urls: [`http://127.0.0.1:${port}/api/admin/`] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_ATTACH_DENIED' })
    await expect(worker({ urls: ['http://127.0.0.1:0/'] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_ATTACH_DENIED' })
    expect((await queueNames(hub)).sort()).toEqual(['api', 'bare', 'web'])
  })

  test('an app with urls keeps them: a worker asking for others registers nothing', async () => {
    await worker({ queue: 'web', token: 'web-token', urls: ['http://127.0.0.1:0/'] })
    expect((await hub.queueStats('web')).urls).toEqual([`http://127.0.0.1:${port}/`])
  })

  test('an app without urls: its first instance binds the prefix; a later one must ask for the same', async () => {
    const first = await worker({ queue: 'bare', token: 'bare-token', urls: ['http://127.0.0.1:0/'] })
    const bound = first.att.info.urls
    expect(bound[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    // the same request (listen(0) again), or the bound prefix itself: admitted
    await worker({ queue: 'bare', token: 'bare-token', urls: ['http://127.0.0.1:0/'] })
    await worker({ queue: 'bare', token: 'bare-token', urls: bound })
    // another port: refused, and no new port is opened
    const ports = (await hub.queueStats('bare')).urls
    await expect(worker({ queue: 'bare', token: 'bare-token', urls: ['http://127.0.0.1:0/other/'] })).rejects.toMatchObject({
      code: 'ERR_HTTPSYS_ATTACH_DENIED', message: expect.stringContaining('bound to')
    })
    expect((await hub.queueStats('bare')).urls).toEqual(ports)
  })
})

test.each(ROUTERS)('%s of a standalone app still lets its worker create its queue', async (name, start) => {
  const hub = await start()
  try {
    const w = await startWorker(hub, { urls: ['http://127.0.0.1:0/'], handle: (req, body, w) => reply(w, req, 200, 'standalone') })
    const res = await request(w.att.info.ports[0], { path: '/' })
    expect(res.body.toString()).toBe('standalone')
    w.att.close()
  } finally {
    await hub.close()
  }
})
