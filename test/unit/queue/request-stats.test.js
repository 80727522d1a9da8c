'use strict'

// What a worker counts for ls, monit and /metrics (src/queue/request-stats.js), on a
// clock the test moves, and through a real attachment (the fake router of the
// contract suite is not needed: the base's own bookkeeping is what counts).

const { RequestStats, quantile, bucketOf, BOUNDS } = require('../../../src/queue/request-stats')
const { AttachmentBase, RequestState, kRespond, kSendBody, kCancel } = require('../../../src/queue/attachment-base')
const { RESPONSE_MORE, RESPONSE_OPAQUE } = require('../../../src/wire/contract')

function clocked () {
  const clock = { t: 0, cpu: 0 }
  const stats = new RequestStats({ now: () => clock.t, cpuUsage: () => ({ user: clock.cpu, system: 0 }) })
  return { clock, stats }
}

describe('buckets', () => {
  test('ten per decade from 0.1 ms to 100 s, each latency in the first bucket that holds it', () => {
    expect(BOUNDS[0]).toBe(0.1)
    expect(BOUNDS[BOUNDS.length - 1]).toBe(100000)
    for (const le of [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000]) expect(BOUNDS).toContain(le)
    expect(bucketOf(0)).toBe(0)
    expect(BOUNDS[bucketOf(1)]).toBe(1)
    expect(BOUNDS[bucketOf(1.01)]).toBe(1.25)
    expect(bucketOf(1e9)).toBe(BOUNDS.length) // above 100 s
  })

  test('quantile reads the bucket bound, never below the truth, across several lists', () => {
    // 98 requests at 1 ms, 2 at 45 ms: p99 is in the 45 ms bucket (upper bound 50)
    const a = [[bucketOf(1), 98]]
    const b = [[bucketOf(45), 2]]
    expect(quantile([a, b], 0.99)).toBe(50)
    expect(quantile([a, b], 0.5)).toBe(1)
    expect(quantile([[], []], 0.99)).toBeNull()
  })
})

describe('RequestStats', () => {
  test('counts by status class, in flight, latency sum and histogram', () => {
    const { clock, stats } = clocked()
    const a = stats.begin()
    const b = stats.begin()
    const c = stats.begin()
    expect(stats.snapshot().inFlight).toBe(3)
    clock.t = 4
    stats.done(a, 200)
    stats.done(b, 404)
    stats.aborted(c)
    const s = stats.snapshot()
    expect(s.inFlight).toBe(0)
    expect(s.total.classes).toEqual([0, 1, 0, 1, 0, 1]) // 1xx 2xx 3xx 4xx 5xx aborted
    expect(s.total.sumMs).toBe(8)
    expect(s.total.buckets).toEqual([[bucketOf(4), 2]])
  })

  test('a status outside 1xx-5xx counts as 5xx (what a client would see as broken)', () => {
    const { stats } = clocked()
    stats.done(stats.begin(), 999)
    expect(stats.snapshot().total.classes[4]).toBe(1)
  })

  test('the minute: requests older than 60 s leave it; life totals keep them', () => {
    const { clock, stats } = clocked()
    for (let i = 0; i < 10; i++) stats.done(stats.begin(), 200)
    for (let s = 0; s < 30; s++) {
      clock.t += 1000
      stats.tick()
    }
    stats.done(stats.begin(), 500)
    let snap = stats.snapshot()
    expect(snap.minute.classes[1]).toBe(10)
    expect(snap.minute.classes[4]).toBe(1)
    expect(snap.minute.perSecond[0]).toBe(10) // oldest whole second first
    expect(snap.minute.perSecond).toHaveLength(30)
    for (let s = 0; s < 40; s++) {
      clock.t += 1000
      stats.tick()
    }
    snap = stats.snapshot()
    expect(snap.minute.classes[1]).toBe(0) // 70 s ago
    expect(snap.minute.classes[4]).toBe(1) // 40 s ago
    expect(snap.minute.ms).toBe(59000)
    expect(snap.total.classes[1]).toBe(10)
  })

  test('CPU over the minute is the CPU time since the oldest slot began', () => {
    const { clock, stats } = clocked()
    for (let s = 0; s < 70; s++) {
      clock.t += 1000
      clock.cpu += 100000 // 0.1 s of CPU per second: 10%
      stats.tick()
    }
    const m = stats.snapshot().minute
    expect(m.cpuMicros / (m.ms * 10)).toBeCloseTo(10, 5)
  })
})

describe('through an attachment (both routers share this base)', () => {
  class Probe extends AttachmentBase {
    constructor (stats) {
      super({}, { window: 1 << 20 })
      this.stats = stats
    }

    [kRespond] (id, st, status, reason, headers, body) { return body ? body.length : 0 }
    [kSendBody] (id, st, chunk) { return chunk ? chunk.length : 0 }
    [kCancel] () {}
  }

  function request (att, id) {
    att.received({ id, hasBody: false }, new RequestState({ hasBody: false }))
  }

  test('a response counts when its last byte is handed over, not at its head', () => {
    const { clock, stats } = clocked()
    const att = new Probe(stats)
    request(att, 1)
    att.respond(1, 201, '', [], null, RESPONSE_MORE)
    expect(stats.snapshot().total.classes[1]).toBe(0)
    clock.t = 12
    att.sendBody(1, Buffer.from('x'), 0)
    const s = stats.snapshot()
    expect(s.total.classes[1]).toBe(1)
    expect(s.total.sumMs).toBe(12)
    expect(s.inFlight).toBe(0)
  })

  test('cancel, a client abort and the end of the attachment count as aborted, once each', () => {
    const { stats } = clocked()
    const att = new Probe(stats)
    request(att, 1)
    request(att, 2)
    request(att, 3)
    att.cancel(1)
    att.aborted(2)
    att.aborted(2)
    att.ended(null)
    const s = stats.snapshot()
    expect(s.total.classes[5]).toBe(3)
    expect(s.inFlight).toBe(0)
  })

  test('an upgrade counts at its 101; the connection that follows is not latency', () => {
    const { clock, stats } = clocked()
    const att = new Probe(stats)
    request(att, 1)
    clock.t = 3
    att.respond(1, 101, '', [], null, RESPONSE_OPAQUE)
    clock.t = 60000
    att.aborted(1) // the websocket closes a minute later
    const s = stats.snapshot()
    expect(s.total.classes).toEqual([1, 0, 0, 0, 0, 0])
    expect(s.total.sumMs).toBe(3)
    expect(s.inFlight).toBe(0)
  })
})
