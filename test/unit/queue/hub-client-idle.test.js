'use strict'

// close()'s idle race on the native router (issue 25, docs/wire-protocol.md "The idle
// race"): after the worker's CONN_IDLE answered 1 (closeIdleConnections(), close()),
// a REQUEST of that connection the router sends before its CONN_KEPT was read before
// the router heard of the close: node never serves a request unread at close(), so
// the worker drops it and destroys the connection. One after CONN_KEPT (a head the
// router was reading then, node's parser in it) is served. A fake router speaks the
// router's side here, so the order of the frames is the test's, not the scheduler's.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const P = require('../../../src/wire/protocol')
const { attach } = require('../../../src/queue/hub-client')

const { T } = P

function fakeRouter () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-idle-'))
  const file = path.join(dir, 'r.sock')
  const got = [] // [type, id] of the worker's frames
  let waiter = null
  let socket = null
  const server = net.createServer((s) => {
    socket = s
    const reader = new P.FrameReader((type, id) => {
      if (type === T.HELLO) {
        const w = new P.FrameWriter()
        w.json(T.HELLO_OK, 0, { queue: 'q', urls: [], ports: [] }, true)
        w.writeTo(s)
        return
      }
      got.push([type, id])
      if (waiter !== null && waiter.test(type, id)) {
        const { resolve } = waiter
        waiter = null
        resolve()
      }
    })
    s.on('data', (chunk) => reader.push(chunk))
    s.on('error', () => {})
  })
  return {
    file,
    got,
    listen: () => new Promise((resolve) => server.listen(file, resolve)),
    /** Resolves once the worker sent a frame of `type` for `id`. */
    frame: (type, id) => new Promise((resolve) => {
      if (got.some(([t, i]) => t === type && i === id)) return resolve()
      waiter = { test: (t, i) => t === type && i === id, resolve }
    }),
    send: (fill) => {
      const w = new P.FrameWriter()
      fill(w)
      w.writeTo(socket)
    },
    close: () => {
      if (socket !== null) socket.destroy()
      server.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

const head = { method: 'GET', url: '/2', versionMajor: 1, versionMinor: 1, rawHeaders: ['Host', 'x'] }
const conn = (id) => ({ remoteAddress: '127.0.0.1', remotePort: 40000, localAddress: '127.0.0.1', localPort: 8080, family: 4, id })
const KEEP_ALIVE = 2

describe('a standalone server\'s connection after its CONN_IDLE answered 1 (native router)', () => {
  let router
  let attachment
  const requests = []
  beforeEach(async () => {
    requests.length = 0
    router = fakeRouter()
    await router.listen()
    attachment = await attach({ queue: 'q', socketPath: router.file, handlers: { onRequest: (req) => requests.push([req.id, req.connectionId]) } })
  })
  afterEach(() => {
    attachment.close()
    router.close()
  })

  test('a REQUEST before the router\'s CONN_KEPT is not served and the connection is destroyed; one after it is served', async () => {
    attachment.connFrame(T.CONN_IDLE, 7, Buffer.from([1]))
    attachment.connFrame(T.CONN_IDLE, 8, Buffer.from([1]))
    await router.frame(T.CONN_IDLE, 8)
    // 7: read by the router before it heard of the close, its CONN_KEPT after it
    router.send((w) => {
      w.request(1, head, conn(7), KEEP_ALIVE)
      w.empty(T.CONN_KEPT, 7)
    })
    await router.frame(T.CONN_DESTROY, 7)
    // 8: the router was reading its head when it heard: CONN_KEPT, then the REQUEST
    router.send((w) => {
      w.empty(T.CONN_KEPT, 8)
      w.request(2, head, conn(8), KEEP_ALIVE)
    })
    // 9: CONN_IDLE answered 0 (a 'request' listener running) asks for no such order
    attachment.connFrame(T.CONN_IDLE, 9, Buffer.from([0]))
    await router.frame(T.CONN_IDLE, 9)
    router.send((w) => w.request(3, head, conn(9), KEEP_ALIVE))
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(requests).toEqual([[2, 8], [3, 9]])
    expect(router.got.filter(([t]) => t === T.CONN_DESTROY)).toEqual([[T.CONN_DESTROY, 7]])
  })

  test('the connection\'s next CONN_IDLE answered 1 asks again: a REQUEST before its CONN_KEPT is dropped', async () => {
    attachment.connFrame(T.CONN_IDLE, 5, Buffer.from([1]))
    await router.frame(T.CONN_IDLE, 5)
    router.send((w) => {
      w.empty(T.CONN_KEPT, 5)
      w.request(1, head, conn(5), KEEP_ALIVE)
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    attachment.connFrame(T.CONN_IDLE, 5, Buffer.from([1]))
    await new Promise((resolve) => setTimeout(resolve, 50))
    router.send((w) => w.request(2, head, conn(5), KEEP_ALIVE))
    await router.frame(T.CONN_DESTROY, 5)
    expect(requests).toEqual([[1, 5]])
  })
})
