'use strict'

// The Go router's frame codec (router/internal/wire) against src/wire/protocol.js,
// byte for byte and both ways: frames the JS FrameWriter encodes are decoded and
// encoded again by Go (router/cmd/wire-driver) into the same bytes, and frames Go
// encodes are decoded and encoded again by the JS codec into the same bytes.
// src/wire/protocol.js stays the reference after src/hub (the workers speak it).
// Go's CheckFromWorker refuses the worker frames of a fixed table (WORKER_FRAMES,
// docs/wire-protocol.md's checks) with the table's reasons (the JS hub's
// AttachmentConnection was held to the same table until src/hub was removed).

const { spawnSync } = require('node:child_process')
const { METHODS } = require('node:http')
const P = require('../../../src/wire/protocol')
const contract = require('../../../src/wire/contract')
const { Rng } = require('../../fuzz/rng')
const { buildGo } = require('../../helpers/go-build')

const { T } = P
let driver = null

beforeAll(() => {
  driver = buildGo('wire-driver')
}, 300000)

afterAll(() => {
  if (driver !== null) driver.cleanup()
})

function go (args, input) {
  const r = spawnSync(driver.bin, args, { input, maxBuffer: 1 << 30 })
  if (r.status !== 0) throw new Error(`wire-driver ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return r.stdout
}

// latin1 strings (one char per byte), as the hub's strings are
const latin1 = (rng, n, lo = 0x20, hi = 0xff) => Array.from({ length: n }, () => String.fromCharCode(rng.range(lo, hi))).join('')
const token = (rng, n) => latin1(rng, n, 0x41, 0x5a)
const bytes = (rng, n) => Buffer.from(Array.from({ length: n }, () => rng.int(256)))
const bodySize = (rng) => rng.pick([0, 1, 100, P.HEADER_SIZE, 4095, 4096, 16 * 1024, 70000])

function tlsInfo (rng) {
  const cipher = rng.chance(0.8) ? { name: token(rng, 12), standardName: token(rng, 20), version: 'TLSv1.3' } : null
  return {
    protocol: rng.chance(0.9) ? 'TLSv1.3' : null,
    cipher,
    alpnProtocol: rng.pick([false, 'http/1.1', 'h2']),
    servername: rng.chance(0.7) ? `${token(rng, 5).toLowerCase()}.test` : null,
    authorized: rng.chance(0.5),
    authorizationError: rng.chance(0.3) ? 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' : null,
    peerCertificate: rng.chance(0.5) ? bytes(rng, rng.range(1, 2000)) : null
  }
}

function pairs (rng, n) {
  const out = []
  for (let i = 0; i < n; i++) out.push(token(rng, rng.range(1, 20)), rng.chance(0.1) ? '' : latin1(rng, rng.range(1, 60)))
  return out
}

/** Frames of every type with JS's FrameWriter, as the hub and the worker write them. */
function jsFrames (seed, count) {
  const rng = new Rng(seed, 0)
  const w = new P.FrameWriter()
  for (let i = 0; i < count; i++) {
    const id = rng.u32()
    const type = rng.range(1, 21)
    switch (type) {
      case T.HELLO: case T.HELLO_OK:
        w.json(type, 0, { pid: rng.u32(), urls: ['http://+:8080/'], window: 128, note: latin1(rng, 20, 0x20, 0x7e) }, true)
        break
      case T.HELLO_ERR: case T.CLOSE:
        w.json(type, 0, { code: 'ERR_HTTPSYS_QUEUE_CLOSED', reason: latin1(rng, 30, 0x20, 0xff) }, false)
        break
      case T.REQUEST: {
        const flags = rng.int(128)
        const head = { method: rng.pick(METHODS), url: '/' + latin1(rng, rng.range(0, 200), 0x21, 0x7e), versionMajor: 1, versionMinor: rng.int(2), rawHeaders: pairs(rng, rng.range(0, 30)) }
        const conn = { remoteAddress: '::ffff:127.0.0.1', remotePort: rng.int(65536), localAddress: '127.0.0.1', localPort: rng.int(65536), family: rng.pick([4, 6]), id: rng.u32(), tls: P.encodeTlsInfo(tlsInfo(rng)) }
        // an upgrade's bytes after its head (REQ_HEAD), some of them empty or by reference size
        w.request(id, head, conn, flags, rng.chance(0.3) ? bytes(rng, bodySize(rng)) : null)
        break
      }
      case T.BODY:
        w.body(id, bytes(rng, bodySize(rng)))
        break
      case T.BODY_END:
        w.bodyEnd(id, rng.chance(0.5) ? null : pairs(rng, rng.range(1, 6)))
        break
      case T.ACK: case T.READ: case T.WINDOW:
        w.u32(type, id, rng.u32())
        break
      case T.RESPONSE: {
        const raw = pairs(rng, rng.range(0, 12))
        if (rng.chance(0.3)) raw.push('Connection', rng.pick(['close', 'keep-alive']))
        const n = bodySize(rng)
        const body = rng.chance(0.3) ? 'x\u00e9\u20ac'.repeat(n / 3 | 0) : bytes(rng, n)
        w.response(id, rng.range(100, 999), rng.int(16), rng.chance(0.2) ? rng.u32() : 0, latin1(rng, rng.range(0, 30), 0x20, 0x7e), raw, body)
        break
      }
      case T.RES_BODY: {
        const n = bodySize(rng)
        w.resBody(id, rng.int(16), rng.pick([null, 'text \u00e9'.repeat(n / 7 | 0), bytes(rng, n)]))
        break
      }
      case T.INFO:
        w.info(id, rng.range(102, 199), 'Early Hints', pairs(rng, rng.range(0, 4)))
        break
      default:
        w.empty(type, id)
    }
  }
  return Buffer.concat(w.take())
}

/** Splits a frame stream into [start, end) ranges, for a readable first difference. */
function frameRanges (buf) {
  const out = []
  for (let p = 0; p + 4 <= buf.length;) {
    const end = p + 4 + buf.readUInt32LE(p)
    out.push([p, Math.min(end, buf.length)])
    p = end
  }
  return out
}

function expectSameBytes (got, want) {
  if (got.equals(want)) return
  const ranges = frameRanges(want)
  const k = ranges.findIndex(([a, b]) => !got.subarray(a, b).equals(want.subarray(a, b)))
  const [a, b] = ranges[k] || [0, want.length]
  throw new Error(`frame ${k} (type ${want[a + 4]}) differs:\n  want ${want.subarray(a, Math.min(b, a + 80)).toString('hex')}\n  got  ${got.subarray(a, Math.min(b, a + 80)).toString('hex')}` +
    `\n  (${got.length} bytes, want ${want.length})`)
}

// One frame description per type for the Go encoder, shaped so that the JS codec can
// encode what it decodes back into the same bytes: a TLS section JS's TlsInfo holds
// whole, a RESPONSE whose flags say what its Connection header says.
function goSpecs (seed, count) {
  const rng = new Rng(seed, 1)
  const specs = []
  for (let i = 0; i < count; i++) {
    const type = rng.range(1, 21)
    const s = { type, id: rng.u32() }
    switch (type) {
      case T.HELLO: case T.HELLO_OK: case T.HELLO_ERR: case T.CLOSE:
        s.json = JSON.stringify({ code: 'X', n: rng.u32(), s: latin1(rng, 10, 0x20, 0x7e) })
        break
      case T.REQUEST: {
        Object.assign(s, {
          flags: rng.int(128) & ~P.REQ_ENCRYPTED,
          versionMajor: 1,
          versionMinor: rng.int(2),
          family: rng.pick([4, 6]),
          remotePort: rng.int(65536),
          localPort: rng.int(65536),
          connectionId: rng.u32(),
          method: rng.pick(METHODS),
          url: '/' + latin1(rng, rng.range(0, 100), 0x21, 0x7e),
          remoteAddress: '10.0.0.' + rng.int(256),
          localAddress: '::1',
          fields: pairs(rng, rng.range(0, 20))
        })
        if (rng.chance(0.3)) {
          s.flags |= P.REQ_HEAD
          s.head = bytes(rng, bodySize(rng)).toString('base64')
        }
        if (rng.chance(0.5)) {
          const t = tlsInfo(rng)
          s.flags |= P.REQ_ENCRYPTED
          s.tls = {
            authorized: t.authorized,
            protocol: t.protocol || '',
            cipherName: t.cipher ? t.cipher.name : '',
            cipherStandardName: t.cipher ? t.cipher.standardName : '',
            cipherVersion: t.cipher ? t.cipher.version : '',
            alpnProtocol: t.alpnProtocol || '',
            servername: t.servername || '',
            authorizationError: t.authorizationError || '',
            certificate: t.peerCertificate ? t.peerCertificate.toString('base64') : null
          }
        }
        break
      }
      case T.BODY:
        s.body = bytes(rng, bodySize(rng)).toString('base64')
        break
      case T.RES_BODY:
        s.flags = rng.int(16)
        s.body = bytes(rng, bodySize(rng)).toString('base64')
        break
      case T.BODY_END:
        s.fields = rng.chance(0.5) ? [] : pairs(rng, rng.range(1, 6))
        break
      case T.ACK: case T.READ: case T.WINDOW:
        s.value = rng.u32()
        break
      case T.RESPONSE: case T.INFO: {
        const raw = pairs(rng, rng.range(0, 8))
        let flags = type === T.INFO ? 0 : rng.int(16)
        if (type === T.RESPONSE && rng.chance(0.4)) {
          const value = rng.pick(['close', 'keep-alive', 'Upgrade'])
          raw.push('Connection', value)
          flags |= P.RES_HAS_CONNECTION
          if (value === 'close' && (flags & contract.RESPONSE_KEEP_OPEN) === 0) flags |= contract.RESPONSE_CLOSE
        }
        Object.assign(s, {
          status: type === T.INFO ? rng.range(102, 199) : rng.range(100, 999),
          flags,
          cacheTtl: type === T.INFO ? 0 : rng.u32(),
          reason: latin1(rng, rng.range(0, 20), 0x20, 0x7e),
          headerBlock: raw.map((x, k) => k % 2 === 0 ? `${x}: ` : `${x}\r\n`).join(''),
          body: type === T.INFO ? '' : bytes(rng, bodySize(rng)).toString('base64')
        })
        break
      }
    }
    specs.push(s)
  }
  return specs
}

// "Name: value\r\n" lines back into [name, value, ...]
function blockPairs (block) {
  const out = []
  for (const line of block.latin1Slice(0, block.length).split('\r\n').slice(0, -1)) {
    const k = line.indexOf(': ')
    out.push(line.slice(0, k), line.slice(k + 2))
  }
  return out
}

/** Decodes frames with the JS codec and encodes what it decoded with the JS writer. */
function jsReencode (buf) {
  const w = new P.FrameWriter()
  const decoded = []
  const r = new P.FrameReader((type, id, b, start, end) => {
    switch (type) {
      case T.HELLO: case T.HELLO_OK: case T.HELLO_ERR: case T.CLOSE: {
        const withVersion = type === T.HELLO || type === T.HELLO_OK
        const d = P.decodeJson(b, start, end, withVersion)
        decoded.push(d)
        w.json(type, id, withVersion ? d.value : d, withVersion)
        break
      }
      case T.REQUEST: {
        const req = P.decodeRequest(id, b, start)
        decoded.push(req)
        const head = { method: req.method, url: req.url, versionMajor: req.httpVersionMajor, versionMinor: req.httpVersionMinor, rawHeaders: req.rawHeaders }
        const conn = { remoteAddress: req.remoteAddress, remotePort: req.remotePort, localAddress: req.localAddress, localPort: req.localPort, family: b[start + 3], id: req.connectionId, tls: req.tls && P.encodeTlsInfo(req.tls) }
        w.request(id, head, conn, b[start] & ~P.REQ_HEAD, req.head)
        break
      }
      case T.BODY:
        w.body(id, Buffer.from(b.subarray(start, end)))
        break
      case T.RES_BODY:
        w.resBody(id, b[start], Buffer.from(b.subarray(start + 1, end)))
        break
      case T.BODY_END: {
        const trailers = P.decodeTrailers(b, start, end)
        decoded.push(trailers)
        w.bodyEnd(id, trailers)
        break
      }
      case T.ACK: case T.READ: case T.WINDOW:
        w.u32(type, id, b.readUInt32LE(start))
        break
      case T.RESPONSE: case T.INFO: {
        const d = P.decodeResponse(b, start, end)
        decoded.push(d)
        if (type === T.INFO) w.info(id, d.status, d.reason, blockPairs(d.headerBlock))
        else w.response(id, d.status, d.flags, d.cacheTtl, d.reason, blockPairs(d.headerBlock), Buffer.from(d.body))
        break
      }
      default:
        w.empty(type, id)
    }
  })
  r.push(buf)
  return { bytes: Buffer.concat(w.take()), decoded }
}

describe('the Go frame codec and src/wire/protocol.js', () => {
  test('hold the same protocol numbers', () => {
    const c = JSON.parse(go(['constants']))
    expect(c.T).toEqual({ ...T })
    for (const name of ['VERSION', 'HEADER_SIZE', 'MAX_FRAME', 'REQ_HAS_BODY', 'REQ_KEEP_ALIVE', 'REQ_ENCRYPTED', 'REQ_EXPECT_CONTINUE', 'REQ_UPGRADE',
      'REQ_EXPECT_OTHER', 'REQ_GRANTED_WINDOW', 'REQ_HEAD', 'RES_HAS_CONNECTION', 'DEFAULT_RECEIVE_WINDOW', 'INITIAL_BODY_WINDOW', 'RESPONSE_WINDOW', 'GRANTED_WINDOW_START']) {
      expect([name, c[name]]).toEqual([name, P[name]])
    }
    for (const name of ['RESPONSE_MORE', 'RESPONSE_CLOSE', 'RESPONSE_OPAQUE', 'RESPONSE_KEEP_OPEN']) expect([name, c[name]]).toEqual([name, contract[name]])
  })

  test.each([[65536], [1 << 20], [64]])('JS frames of every type, read by Go through a %i-byte buffer, encode again into the same bytes', (size) => {
    const input = jsFrames(7 + size, 600)
    const types = new Set(frameRanges(input).map(([a]) => input[a + 4]))
    expect(types.size).toBe(21)
    expectSameBytes(go(['reencode', String(size)], input), input)
  })

  test('Go frames of every type, decoded by JS, encode again into the same bytes and the values Go was given', () => {
    const specs = goSpecs(11, 600)
    const bytes = go(['encode'], specs.map((s) => JSON.stringify(s)).join('\n') + '\n')
    const { bytes: again, decoded } = jsReencode(bytes)
    expectSameBytes(again, bytes)
    // and what JS read is what Go was told to write
    let k = 0
    for (const s of specs) {
      if (s.type === T.REQUEST) {
        const req = decoded[k++]
        expect({ method: req.method, url: req.url, rawHeaders: req.rawHeaders, connectionId: req.connectionId, remoteAddress: req.remoteAddress, remotePort: req.remotePort })
          .toEqual({ method: s.method, url: s.url, rawHeaders: s.fields, connectionId: s.connectionId, remoteAddress: s.remoteAddress, remotePort: s.remotePort })
        expect(req.head === null ? null : req.head.toString('base64')).toBe(s.head === undefined ? null : s.head)
        if (s.tls) {
          expect(req.tls.servername).toBe(s.tls.servername || null)
          expect(req.tls.authorized).toBe(s.tls.authorized)
          expect(req.tls.peerCertificate ? req.tls.peerCertificate.toString('base64') : null).toBe(s.tls.certificate)
        } else {
          expect(req.tls).toBeNull()
        }
      } else if (s.type === T.BODY_END) {
        expect(decoded[k++]).toEqual(s.fields.length ? s.fields : null)
      } else if (s.type === T.RESPONSE || s.type === T.INFO) {
        const d = decoded[k++]
        expect([d.status, d.flags, d.cacheTtl, d.reason, d.headerBlock.latin1Slice()]).toEqual([s.status, s.flags, s.cacheTtl, s.reason, s.headerBlock])
      } else if ([T.HELLO, T.HELLO_OK].includes(s.type)) {
        expect(decoded[k++]).toEqual({ version: P.VERSION, value: JSON.parse(s.json) })
      } else if ([T.HELLO_ERR, T.CLOSE].includes(s.type)) {
        expect(decoded[k++]).toEqual(JSON.parse(s.json))
      }
    }
  })

  // docs/wire-protocol.md "The hub checks every RESPONSE" and "Failure rules": the
  // worker frames the router refuses (dropping the worker), with the reason it logs
  test('refuse the worker frames docs/wire-protocol.md says are malformed, with the table\'s reasons', () => {
    const goVerdicts = go(['check'], Buffer.concat(WORKER_FRAMES.map(([bytes]) => bytes))).toString().trim().split('\n').map((l) => JSON.parse(l).error)
    expect(goVerdicts).toEqual(WORKER_FRAMES.map(([, reason]) => reason))
    // most are refused: the table exercises the checks, not only the happy path
    expect(WORKER_FRAMES.filter(([, reason]) => reason !== null).length).toBeGreaterThan(35)
  })
})

function frame (type, payload) {
  const b = Buffer.alloc(P.HEADER_SIZE + payload.length)
  b.writeUInt32LE(5 + payload.length, 0)
  b[4] = type
  b.writeUInt32LE(3, 5)
  payload.copy(b, P.HEADER_SIZE)
  return b
}

// a RESPONSE / INFO payload: status, flags, ttl, reason, block, body, with lengths that may lie
function res (status, reason, block, body = '', { rlen, blen } = {}) {
  const b = Buffer.alloc(14 + reason.length + block.length + body.length)
  b.writeUInt16LE(status, 0)
  b.writeUInt16LE(rlen ?? reason.length, 8)
  b.latin1Write(reason, 10)
  b.writeUInt32LE(blen ?? block.length, 10 + reason.length)
  b.latin1Write(block + body, 14 + reason.length)
  return b
}

function u32 (n) {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n)
  return b
}

const CONTROL = 'RESPONSE reason holds a control character'
const LINES = (what) => `${what} header block does not hold whole "Name: value\\r\\n" lines`

// [frame from a worker, null (taken) or the reason the router drops the worker for]
const WORKER_FRAMES = [
  [frame(T.RESPONSE, res(200, 'OK', 'A: b\r\n', 'body')), null],
  [frame(T.RESPONSE, res(101, 'Switching Protocols', 'Upgrade: websocket\r\n')), null],
  [frame(T.RESPONSE, res(999, '', '')), null],
  [frame(T.RESPONSE, res(200, 'OK', '').subarray(0, 13)), 'RESPONSE payload of 13 bytes is shorter than its 14 fixed bytes'],
  [frame(T.RESPONSE, Buffer.alloc(0)), 'RESPONSE payload of 0 bytes is shorter than its 14 fixed bytes'],
  ...[100, 102, 199, 1000, 65535].map((s) => [frame(T.RESPONSE, res(s, 'X', '')), `RESPONSE status ${s} is not 101 or 200-999`]),
  [frame(T.RESPONSE, res(200, 'OK', '', '', { rlen: 40 })), 'RESPONSE reason length 40 runs past the frame'],
  [frame(T.RESPONSE, res(200, 'OK', '', '', { rlen: 3 })), 'RESPONSE reason length 3 runs past the frame'],
  ...['O\rK', 'O\nK', 'O\x00K', 'O\x7fK'].map((r) => [frame(T.RESPONSE, res(200, r, '')), CONTROL]),
  ...['O\tK', 'caf\xe9'].map((r) => [frame(T.RESPONSE, res(200, r, '')), null]),
  [frame(T.RESPONSE, res(200, 'OK', 'A: b\r\n', '', { blen: 100 })), 'RESPONSE header block length 100 runs past the frame'],
  [frame(T.RESPONSE, res(200, 'OK', 'A: b\r\n', '', { blen: 0xffffffff })), 'RESPONSE header block length 4294967295 runs past the frame'],
  ...['A: b', '\r\nA: b\r\n', 'a\r\n', 'A: b\n', 'A: b\r\r', '\r\n'].map((block) => [frame(T.RESPONSE, res(200, 'OK', block)), LINES('RESPONSE')]),
  [frame(T.INFO, res(103, 'Early Hints', 'Link: </a>\r\n')), null],
  ...[100, 101].map((s) => [frame(T.INFO, res(s, 'X', '')), `INFO status ${s} is not 102-199`]),
  ...[102, 199].map((s) => [frame(T.INFO, res(s, 'X', '')), null]),
  [frame(T.INFO, res(200, 'X', '')), 'INFO status 200 is not 102-199'],
  [frame(T.INFO, res(103, 'X', '', 'body')), 'INFO carries a body'],
  [frame(T.INFO, res(103, 'X\x01', '')), 'INFO reason holds a control character'],
  [frame(T.INFO, res(103, 'X', 'bad')), LINES('INFO')],
  [frame(T.INFO, res(103, 'X', '').subarray(0, 7)), 'INFO payload of 7 bytes is shorter than its 14 fixed bytes'],
  [frame(T.ACK, u32(0)), null],
  [frame(T.ACK, Buffer.from([0, 0, 0])), 'ACK without its u32'],
  [frame(T.READ, u32(65536)), null],
  [frame(T.READ, Buffer.alloc(0)), 'READ without its u32'],
  [frame(T.RES_BODY, Buffer.from([1, 2, 3])), null],
  [frame(T.RES_BODY, Buffer.alloc(0)), 'RES_BODY without its flags byte'],
  [frame(T.HELLO, Buffer.concat([Buffer.from([P.VERSION]), Buffer.from('{"pid":1}')])), null],
  [frame(T.HELLO, Buffer.concat([Buffer.from([P.VERSION]), Buffer.from('{"pid":')])), 'a control frame is not valid JSON'],
  [frame(T.HELLO, Buffer.alloc(0)), 'a control frame is not valid JSON'],
  ...[T.CONTINUE, T.CANCEL, T.DETACH, T.CONN_END, T.CONN_FIN, T.CONN_DESTROY].map((t) => [frame(t, Buffer.alloc(0)), null]),
  // a worker's verdicts on a connection of its server's own port (version 6)
  [frame(T.CONN_WRITE, Buffer.from('HTTP/1.1 400 Mine\r\n\r\n')), null],
  [frame(T.CONN_IDLE, Buffer.from([1])), null],
  [frame(T.CONN_IDLE, Buffer.alloc(0)), 'CONN_IDLE payload of 0 bytes is not 1'],
  [frame(T.CONN_IDLE, Buffer.from([1, 0])), 'CONN_IDLE payload of 2 bytes is not 1'],
  // frames only the router sends, and numbers no frame has
  ...[0, T.HELLO_OK, T.HELLO_ERR, T.REQUEST, T.BODY, T.BODY_END, T.ABORT, T.WINDOW, T.DETACH_OK, T.CLOSE, T.CONN_CLOSED, T.CONN_OPEN, T.CONN_ERROR, T.CONN_TIMEOUT, T.CONN_HELD, T.CONN_KEPT, 255]
    .map((t) => [frame(t, Buffer.alloc(0)), `unknown frame type ${t}`])
]
