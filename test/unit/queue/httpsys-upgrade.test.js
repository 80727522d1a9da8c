'use strict'

// Upgrades on HTTP.SYS, from the app's 'upgrade' listener down to the addon's calls
// (HTTP_SEND_RESPONSE_FLAG_OPAQUE, then the request's entity body and the response's
// as the byte stream both ways), over the fake addon. The kernel's side of opaque mode
// cannot run under Wine (HttpSendResponseEntityBody is a stub there): real Windows
// checks it (test/windows/README.md).

const { Server } = require('../../../src/http/server')
const { createBackend } = require('../../../src/queue/httpsys')
const { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE } = require('../../../src/wire/contract')
const { createFakeAddon, fakeRequest, EVENT } = require('../../helpers/fake-addon')

const UPGRADE_HEADERS = ['Host', 'localhost', 'Connection', 'keep-alive, Upgrade', 'Upgrade', 'websocket']
const tick = () => new Promise((resolve) => setImmediate(resolve))

async function serve ({ maxBodySize } = {}) {
  const binding = createFakeAddon()
  const backend = createBackend(() => binding)
  const seen = { upgrades: [], requests: [] }
  const server = new Server({ queueBackend: { attach: (o) => backend.attach({ ...o, maxBodySize }) } }, (req, res) => {
    seen.requests.push(req)
    res.end('plain')
  })
  server.on('upgrade', (req, socket, head) => seen.upgrades.push({ req, socket, head }))
  await new Promise((resolve) => server.listen(8080, resolve))
  const queue = binding.queues[binding.queues.length - 1]
  return { server, queue, seen }
}

test("an HTTP/1.1 request with Connection: upgrade and Upgrade reaches 'upgrade'; others reach 'request'", async () => {
  const { queue, seen, server } = await serve()
  queue.emit([
    EVENT.REQUEST, 1, fakeRequest(1, { rawHeaders: UPGRADE_HEADERS }),
    EVENT.REQUEST, 2, fakeRequest(2, { rawHeaders: ['Host', 'localhost', 'Upgrade', 'websocket'] }), // no Connection token
    EVENT.REQUEST, 3, fakeRequest(3, { rawHeaders: UPGRADE_HEADERS, httpVersionMinor: 0 })
  ])
  await tick()
  expect(seen.upgrades.map((u) => u.req.url)).toEqual(['/'])
  expect(seen.upgrades[0].req.upgrade).toBe(true)
  expect(seen.requests.map((r) => r.upgrade)).toEqual([false, false])
  seen.upgrades[0].socket.destroy()
  server.close()
})

test('the 101 goes out as one opaque send; then bytes flow both ways through body reads and sends', async () => {
  const { queue, seen, server } = await serve({ maxBodySize: 10 })
  queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { rawHeaders: UPGRADE_HEADERS })])
  const { socket } = seen.upgrades[0]
  const got = []
  socket.on('data', (d) => got.push(d.toString()))
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
  await tick()
  const [[id, status, reason, headers, body, flags]] = queue.callsOf('respond')
  expect([id, status, reason, body]).toEqual([1, 101, 'Switching Protocols', null])
  expect(headers).toEqual(['Upgrade', 'websocket', 'Connection', 'Upgrade'])
  expect(flags & (RESPONSE_OPAQUE | RESPONSE_MORE)).toBe(RESPONSE_OPAQUE | RESPONSE_MORE)
  // the app reads: the client's bytes are asked for (HttpReceiveRequestEntityBody)
  expect(queue.callsOf('readBody').map((c) => c[0])).toContain(1)
  queue.emit([EVENT.SENT, 1, 0, EVENT.BODY, 1, Buffer.from('client bytes, more than the body limit')])
  await tick()
  expect(got.join('')).toBe('client bytes, more than the body limit')
  socket.write('server bytes')
  await tick()
  expect(queue.callsOf('sendBody').map(([i, b, f]) => [i, String(b), f])).toEqual([[1, 'server bytes', RESPONSE_MORE]])
  // the app ends: the last send closes the connection (HTTP.SYS has no half-close) ...
  const ended = new Promise((resolve) => socket.on('close', resolve))
  socket.end()
  await tick()
  const last = queue.callsOf('sendBody')[1]
  expect([last[0], last[1], last[2] & RESPONSE_MORE, last[2] & RESPONSE_CLOSE]).toEqual([1, null, 0, RESPONSE_CLOSE])
  // ... and once it is out, the client's side is over too: the socket closes cleanly
  queue.emit([EVENT.SENT, 1, 0, EVENT.SENT, 1, 0])
  await ended
  expect(queue.callsOf('cancel')).toEqual([])
  server.close()
})

test('a refused upgrade is an ordinary response that closes; a reset reaches the app', async () => {
  const { queue, seen, server } = await serve()
  queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { rawHeaders: UPGRADE_HEADERS }), EVENT.REQUEST, 2, fakeRequest(2, { rawHeaders: UPGRADE_HEADERS })])
  const [a, b] = seen.upgrades
  a.socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nbad')
  await tick()
  // written whole: one send that closes the connection (nothing streamed)
  const [[, status, , , body, flags]] = queue.callsOf('respond')
  expect([status, String(body), flags]).toEqual([400, 'bad', RESPONSE_CLOSE])
  expect(queue.callsOf('sendBody').filter((c) => c[0] === 1)).toEqual([])

  const events = []
  b.socket.on('error', (e) => events.push(e.code))
  b.socket.on('close', () => events.push('close'))
  b.socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
  queue.emit([EVENT.ABORT, 2, 1229])
  await tick()
  expect(events).toEqual(['ECONNRESET', 'close'])
  server.close()
})
