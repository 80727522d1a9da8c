'use strict'

const crypto = require('node:crypto')
const P = require('../../../src/wire/protocol')
const { T } = P

// Writes frames with `build`, then feeds the bytes to a FrameReader in the given pieces.
function roundTrip (build, pieces) {
  const w = new P.FrameWriter()
  build(w)
  const bytes = Buffer.concat(w.take())
  const frames = []
  const r = new P.FrameReader((type, id, b, start, end) => {
    frames.push({ type, id, payload: Buffer.from(b.subarray(start, end)), b, start, end })
  })
  for (const piece of (pieces || ((x) => [x]))(bytes)) r.push(piece)
  return { frames, bytes }
}

function randomSplits (bytes, seed) {
  const out = []
  let x = seed
  let off = 0
  while (off < bytes.length) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    const n = 1 + (x % 3 === 0 ? x % 3 : x % 700)
    out.push(bytes.subarray(off, off + n))
    off += n
  }
  return out
}

const head = {
  method: 'POST',
  url: '/api/x?y=1',
  versionMajor: 1,
  versionMinor: 1,
  rawHeaders: ['Host', 'example.com', 'X-Empty', '', 'Set-Cookie', 'a=1', 'set-cookie', 'b=2', 'X-Latin1', 'caf\u00e9']
}
const conn = { remoteAddress: '::ffff:127.0.0.1', remotePort: 54321, localAddress: '::ffff:127.0.0.1', localPort: 8080, family: 6, id: 4000000000 }

describe('wire protocol codec', () => {
  test('CONN_OPEN and CONN_ERROR decode the bytes the Go router writes (router/internal/wire/connframes_test.go)', () => {
    const b = Buffer.from('1c000000160700000004341250000700312e322e332e340700352e362e372e380f000000170700000090010300626164474554', 'hex')
    expect(P.decodeConnOpen(b, 9, 32)).toEqual({ family: 4, remotePort: 0x1234, localPort: 80, remoteAddress: '1.2.3.4', localAddress: '5.6.7.8' })
    expect(P.encodeConnOpen(P.decodeConnOpen(b, 9, 32))).toEqual(b.subarray(9, 32))
    const e = P.decodeConnError(b, 41, b.length)
    expect(e).toEqual({ status: 400, reason: 'bad', raw: Buffer.from('GET') })
    expect(P.encodeConnError(400, 'bad', Buffer.from('GET'))).toEqual(b.subarray(41))
    expect(P.decodeConnOpen(b, 9, 20)).toBeNull()
  })

  test('REQUEST round-trips to the contract\'s QueueRequest', () => {
    const flags = P.REQ_HAS_BODY | P.REQ_KEEP_ALIVE | P.REQ_EXPECT_CONTINUE
    const { frames } = roundTrip((w) => w.request(7, head, conn, flags))
    expect(frames).toHaveLength(1)
    expect(frames[0].type).toBe(T.REQUEST)
    const req = P.decodeRequest(frames[0].id, frames[0].b, frames[0].start)
    expect(req).toEqual({
      id: 7,
      method: 'POST',
      url: '/api/x?y=1',
      httpVersionMajor: 1,
      httpVersionMinor: 1,
      rawHeaders: head.rawHeaders,
      remoteAddress: '::ffff:127.0.0.1',
      remotePort: 54321,
      localAddress: '::ffff:127.0.0.1',
      localPort: 8080,
      remoteFamily: 'IPv6',
      encrypted: false,
      tls: null,
      hasBody: true,
      connectionId: 4000000000,
      keepAlive: true,
      expect: 'continue',
      upgrade: false,
      head: null
    })
  })

  test('REQUEST: an upgrade carries the bytes read after its head (REQ_HEAD, after the TLS section), a copy the app may keep', () => {
    const tls = P.encodeTlsInfo({ protocol: 'TLSv1.3', cipher: null, alpnProtocol: 'http/1.1', servername: 'a.test', authorized: false, authorizationError: null, peerCertificate: null })
    const after = Buffer.from('\x81\x05hello, and more')
    const { frames } = roundTrip((w) => w.request(3, { ...head, method: 'GET' }, { ...conn, tls }, P.REQ_UPGRADE | P.REQ_ENCRYPTED, after))
    const f = frames[0]
    expect(f.b[f.start] & P.REQ_HEAD).toBe(P.REQ_HEAD)
    const req = P.decodeRequest(f.id, f.b, f.start)
    expect([req.upgrade, req.tls.servername, req.head.toString('latin1')]).toEqual([true, 'a.test', after.toString('latin1')])
    f.b.fill(0, f.start, f.end)
    expect(req.head.toString('latin1')).toBe(after.toString('latin1'))
    // without bytes after the head: no REQ_HEAD, head null
    const none = roundTrip((w) => w.request(4, head, conn, P.REQ_UPGRADE)).frames[0]
    expect(P.decodeRequest(none.id, none.b, none.start).head).toBeNull()
  })

  test('REQUEST: an Expect header other than 100-continue is reported as such', () => {
    const { frames } = roundTrip((w) => w.request(8, head, conn, P.REQ_EXPECT_OTHER))
    expect(P.decodeRequest(frames[0].id, frames[0].b, frames[0].start).expect).toBe('other')
    const plain = roundTrip((w) => w.request(9, head, conn, 0)).frames[0]
    expect(P.decodeRequest(plain.id, plain.b, plain.start).expect).toBeNull()
  })

  test('a worker\'s REQUESTs decoded with its memo of the last one\'s strings are the same requests', () => {
    const heads = [
      head,
      head,
      { ...head, method: 'PUT', url: '/api/z?y=1', rawHeaders: ['Host', 'example.org', 'X-Empty', '', 'Set-Cookie', 'a=1'] },
      { ...head, url: '/' + 'x'.repeat(100), rawHeaders: ['host', 'example.com', 'X-Latin1', 'caf\u00e8', 'X-Empty', 'y'] },
      { ...head, rawHeaders: Array.from({ length: 40 }, (_, i) => i % 2 ? `v${i}` : `h${i}`) },
      head
    ]
    const conns = [conn, conn, { ...conn, remoteAddress: '::ffff:127.0.0.2' }, conn, conn, { ...conn, localAddress: '::1' }]
    const memo = P.decodeMemo()
    heads.forEach((h, i) => {
      const f = roundTrip((w) => w.request(i + 1, h, conns[i], 0)).frames[0]
      const req = P.decodeRequest(f.id, f.b, f.start, memo)
      expect(req).toEqual(P.decodeRequest(f.id, f.b, f.start))
      expect([req.method, req.url, req.remoteAddress, req.localAddress, req.rawHeaders]).toEqual([h.method, h.url, conns[i].remoteAddress, conns[i].localAddress, h.rawHeaders])
    })
  })

  test('RESPONSE carries status, flags, ttl, reason, a wire-ready header block and a utf8 body', () => {
    const body = 'h\u00e9llo \u{1F600}'
    const { frames } = roundTrip((w) => {
      const n = w.response(3, 201, 1, 60, 'Created', ['Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-Num', 42], body)
      expect(n).toBe(Buffer.byteLength(body))
    })
    const res = P.decodeResponse(frames[0].b, frames[0].start, frames[0].end)
    expect(res.status).toBe(201)
    expect(res.flags).toBe(1)
    expect(res.cacheTtl).toBe(60)
    expect(res.reason).toBe('Created')
    expect(res.headerBlock.toString('latin1')).toBe('Content-Type: text/plain\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Num: 42\r\n')
    expect(res.body.toString('utf8')).toBe(body)
  })

  test('a Connection header is flagged for the hub, and "close" in it asks to close', () => {
    const { frames } = roundTrip((w) => {
      w.response(1, 200, 0, 0, 'OK', ['connection', 'Close'], null)
      w.response(2, 200, 0, 0, 'OK', ['Connection', 'keep-alive'], null)
      w.response(3, 200, 0, 0, 'OK', [], null)
      w.response(4, 200, 0, 0, 'OK', ['cOnNeCtIoN', 'close'], null)
      w.response(5, 200, 0, 0, 'OK', ['Connectio\u00ee', 'close', 'Connection-', 'close', 'Connect_on', 'close'], null)
    })
    const flags = frames.map((f) => P.decodeResponse(f.b, f.start, f.end).flags)
    expect(flags).toEqual([P.RES_HAS_CONNECTION | 2, P.RES_HAS_CONNECTION, 0, P.RES_HAS_CONNECTION | 2, 0])
  })

  test('INFO carries an interim response: 102-199 only, no body (checkInfo)', () => {
    const { frames } = roundTrip((w) => w.info(5, 103, 'Early Hints', ['Link', '</a.css>; rel=preload']))
    const [f] = frames
    expect(f.type).toBe(T.INFO)
    expect(P.checkInfo(f.b, f.start, f.end)).toBe(null)
    const r = P.decodeResponse(f.b, f.start, f.end)
    expect([r.status, r.reason, r.headerBlock.toString('latin1'), r.body.length]).toEqual([103, 'Early Hints', 'Link: </a.css>; rel=preload\r\n', 0])
    for (const status of [100, 101, 200, 99]) {
      const bad = roundTrip((w) => w.info(1, status, 'X', [])).frames[0]
      expect(P.checkInfo(bad.b, bad.start, bad.end)).toMatch(/INFO status \d+ is not 102-199/)
    }
    const withBody = roundTrip((w) => w.response(1, 103, 0, 0, 'X', [], 'body', T.INFO)).frames[0]
    expect(P.checkInfo(withBody.b, withBody.start, withBody.end)).toBe('INFO carries a body')
  })

  test('BODY_END: no payload without trailers; a chunked body\'s trailers round-trip in order, repeats kept', () => {
    const w = new P.FrameWriter()
    w.bodyEnd(3, null)
    w.bodyEnd(4, [])
    w.bodyEnd(5, ['X-Sum', 'abc', 'x-sum', 'def', 'Empty', ''])
    const r = []
    const reader = new P.FrameReader((type, id, b, s, e) => r.push({ type, id, trailers: P.decodeTrailers(b, s, e), bytes: e - s }))
    reader.push(Buffer.concat(w.take()))
    expect(r.map((x) => [x.type, x.id, x.bytes])).toEqual([[T.BODY_END, 3, 0], [T.BODY_END, 4, 0], [T.BODY_END, 5, 4 + 7 + 5 + 7 + 5 + 7 + 2]])
    expect(r[0].trailers).toBeNull()
    expect(r[1].trailers).toBeNull()
    expect(r[2].trailers).toEqual(['X-Sum', 'abc', 'x-sum', 'def', 'Empty', ''])
  })

  test('large bodies travel by reference, not copied into the slab', () => {
    const big = crypto.randomBytes(200 * 1024)
    const w = new P.FrameWriter()
    w.body(9, big)
    w.response(10, 200, 0, 0, 'OK', [], big)
    const parts = w.take()
    expect(parts).toContain(big)
    const r = []
    const reader = new P.FrameReader((type, id, b, s, e) => r.push({ type, id, data: Buffer.from(b.subarray(s, e)) }))
    reader.push(Buffer.concat(parts))
    expect(r[0]).toMatchObject({ type: T.BODY, id: 9 })
    expect(r[0].data.equals(big)).toBe(true)
    expect(P.decodeResponse(r[1].data, 0, r[1].data.length).body.equals(big)).toBe(true)
  })

  test('a large body by reference costs the writer no buffer of its size (a 1 MB response is not a second MB)', () => {
    const big = Buffer.alloc(1024 * 1024, 'x')
    const w = new P.FrameWriter()
    w.resBody(3, 0, big)
    w.body(4, big)
    expect(w.slab.length).toBeLessThanOrEqual(64 * 1024)
    const parts = w.take()
    expect(parts.reduce((n, p) => n + p.length, 0)).toBe(2 * (9 + big.length) + 1)
    const r = []
    const reader = new P.FrameReader((type, id, b, s, e) => r.push({ type, id, bytes: e - s, flags: b[s] }))
    reader.push(Buffer.concat(parts))
    expect(r).toEqual([{ type: T.RES_BODY, id: 3, bytes: big.length + 1, flags: 0 }, { type: T.BODY, id: 4, bytes: big.length, flags: 120 }])
  })

  test('every frame type survives random splits, and many frames in one piece', () => {
    const small = crypto.randomBytes(300)
    const big = crypto.randomBytes(70000)
    const build = (w) => {
      w.json(T.HELLO, 0, { queue: 'q', urls: ['http://+:0/'], pid: 1 }, true)
      w.json(T.HELLO_OK, 0, { queue: 'q', urls: [], ports: [] }, true)
      w.json(T.HELLO_ERR, 0, { code: 'ERR_X', details: {} }, false)
      w.json(T.CLOSE, 0, { reason: 'bye' }, false)
      w.request(1, head, conn, 0)
      w.body(1, small)
      w.body(1, big)
      w.empty(T.BODY_END, 1)
      w.bodyEnd(1, ['Trailer-A', 'v'])
      w.empty(T.ABORT, 2)
      w.u32(T.ACK, 0, 0xfffffffe)
      w.u32(T.READ, 1, 65536)
      w.response(1, 200, 1, 0, 'OK', ['A', 'b'], small)
      w.resBody(1, 1, big)
      w.resBody(1, 0, 'tail \u00e9')
      w.resBody(1, 0, null)
      w.u32(T.WINDOW, 1, 12345)
      w.empty(T.CONTINUE, 1)
      w.empty(T.CANCEL, 1)
      w.empty(T.DETACH, 0)
      w.empty(T.DETACH_OK, 0)
    }
    const whole = roundTrip(build)
    expect(whole.frames.map((f) => f.type)).toEqual([
      T.HELLO, T.HELLO_OK, T.HELLO_ERR, T.CLOSE, T.REQUEST, T.BODY, T.BODY, T.BODY_END, T.BODY_END, T.ABORT, T.ACK, T.READ,
      T.RESPONSE, T.RES_BODY, T.RES_BODY, T.RES_BODY, T.WINDOW, T.CONTINUE, T.CANCEL, T.DETACH, T.DETACH_OK
    ])
    const f = whole.frames
    expect(P.decodeJson(f[0].payload, 0, f[0].payload.length, true)).toEqual({ version: P.VERSION, value: { queue: 'q', urls: ['http://+:0/'], pid: 1 } })
    expect(P.decodeJson(f[3].payload, 0, f[3].payload.length, false)).toEqual({ reason: 'bye' })
    expect(f[6].payload.equals(big)).toBe(true)
    expect(P.decodeTrailers(f[8].payload, 0, f[8].payload.length)).toEqual(['Trailer-A', 'v'])
    expect(f[10].payload.readUInt32LE(0)).toBe(0xfffffffe)
    expect(f[13].payload[0]).toBe(1)
    expect(f[13].payload.subarray(1).equals(big)).toBe(true)
    expect(f[14].payload.subarray(1).toString()).toBe('tail \u00e9')
    expect(f[15].payload.length).toBe(1)
    for (const seed of [1, 2, 3, 42, 1000]) {
      const split = roundTrip(build, (bytes) => randomSplits(bytes, seed))
      expect(split.frames.map((x) => [x.type, x.id, x.payload.toString('hex')]))
        .toEqual(whole.frames.map((x) => [x.type, x.id, x.payload.toString('hex')]))
    }
    const bytewise = roundTrip(build, (bytes) => Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)))
    expect(bytewise.frames).toHaveLength(whole.frames.length)
  })

  test('a frame that arrives in one piece is handed out as a view, not a copy', () => {
    const w = new P.FrameWriter()
    w.body(1, Buffer.alloc(10, 1))
    const bytes = Buffer.concat(w.take())
    let seen
    new P.FrameReader((type, id, b) => { seen = b }).push(bytes)
    expect(seen).toBe(bytes)
  })

  test('a frame split across reads is copied once, at its own size; what follows it stays a view', () => {
    const big = crypto.randomBytes(200000)
    const next = crypto.randomBytes(50000)
    const w = new P.FrameWriter()
    w.resBody(1, 1, big)
    w.resBody(2, 0, next)
    w.u32(T.WINDOW, 3, 7)
    const bytes = Buffer.concat(w.take())
    const bigFrame = 9 + 1 + big.length
    // Reads: 2 bytes (the length is split), 64 KiB pieces, and a last piece holding the
    // end of the big frame, all of the next frame and half of the WINDOW frame.
    const pieces = [bytes.subarray(0, 2)]
    let off = 2
    while (off + 65536 < bigFrame) {
      pieces.push(bytes.subarray(off, off + 65536))
      off += 65536
    }
    const tailEnd = bigFrame + 9 + 1 + next.length + 6
    pieces.push(bytes.subarray(off, tailEnd), bytes.subarray(tailEnd))
    const concat = jest.spyOn(Buffer, 'concat')
    const got = []
    try {
      const r = new P.FrameReader((type, id, b, start, end) => got.push({ id, b, data: Buffer.from(b.subarray(start, end)) }))
      for (const piece of pieces) r.push(piece)
      const copied = concat.mock.calls.reduce((n, [list]) => n + list.reduce((m, x) => m + x.length, 0), 0)
      // the big frame once, plus the 9 bytes of the WINDOW frame split over two reads
      expect(copied).toBe(bigFrame + 13)
    } finally {
      concat.mockRestore()
    }
    expect(got.map((f) => f.id)).toEqual([1, 2, 3])
    expect(got[0].data.subarray(1).equals(big)).toBe(true)
    expect(got[1].data.subarray(1).equals(next)).toBe(true)
    expect(got[1].b.buffer).toBe(pieces[pieces.length - 2].buffer)
    expect(got[2].data.readUInt32LE(0)).toBe(7)
  })

  test('onPieces takes a large split frame as the views it arrived in, never copied; one it declines is copied', () => {
    const big = crypto.randomBytes(300000)
    const small = crypto.randomBytes(5000) // below piecesFrom: always one Buffer
    const w = new P.FrameWriter()
    w.resBody(1, 1, big)
    w.resBody(2, 0, small)
    w.body(3, big)
    const bytes = Buffer.concat(w.take())
    const pieces = []
    for (let off = 0; off < bytes.length; off += 65536) pieces.push(bytes.subarray(off, off + 65536))
    const got = []
    const seen = []
    const concat = jest.spyOn(Buffer, 'concat')
    try {
      const r = new P.FrameReader(
        (type, id, b, start, end) => got.push({ type, id, data: Buffer.from(b.subarray(start, end)) }),
        (type, id, list) => {
          seen.push({ type, id, list })
          return type === T.RES_BODY // BODY is declined: it takes the copying path
        })
      for (const piece of pieces) r.push(piece)
      const copied = concat.mock.calls.reduce((n, [list]) => n + list.reduce((m, x) => m + x.length, 0), 0)
      expect(copied).toBe(9 + big.length) // only the declined BODY frame
    } finally {
      concat.mockRestore()
    }
    expect(seen.map((s) => [s.type, s.id])).toEqual([[T.RES_BODY, 1], [T.BODY, 3]])
    const taken = seen[0].list
    // the views cover the frame exactly, header first, and share the reads' memory
    expect(taken.reduce((n, x) => n + x.length, 0)).toBe(9 + 1 + big.length)
    for (const v of taken) expect(v.buffer).toBe(bytes.buffer) // every view is of the reads' memory
    const frame = Buffer.concat(taken)
    expect(frame.readUInt32LE(0)).toBe(5 + 1 + big.length)
    expect(frame[9]).toBe(1) // the RES_BODY flags byte
    expect(frame.subarray(10).equals(big)).toBe(true)
    // the frame after it, and the declined one, still arrive through onFrame, in order
    expect(got.map((f) => [f.type, f.id])).toEqual([[T.RES_BODY, 2], [T.BODY, 3]])
    expect(got[0].data.subarray(1).equals(small)).toBe(true)
    expect(got[1].data.equals(big)).toBe(true)
  })

  test('a malformed length is a protocol error', () => {
    const r = new P.FrameReader(() => {})
    const bad = Buffer.alloc(9)
    bad.writeUInt32LE(2, 0)
    expect(() => r.push(bad)).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_PROTOCOL' }))
    const huge = Buffer.alloc(9)
    huge.writeUInt32LE(P.MAX_FRAME + 1, 0)
    expect(() => new P.FrameReader(() => {}).push(huge)).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_PROTOCOL' }))
  })

  test('writer regions already taken are never overwritten', () => {
    const w = new P.FrameWriter()
    w.u32(T.ACK, 0, 1)
    const [first] = w.take()
    const copy = Buffer.from(first)
    for (let i = 0; i < 5000; i++) w.u32(T.ACK, 0, i)
    w.take()
    expect(first.equals(copy)).toBe(true)
  })
})
