'use strict'

// What this worker process served, for `httpsys ls`, `httpsys monit` and the metrics
// endpoint: requests by status class, a latency histogram (from the request's arrival in
// this process to the last response byte handed to the router: the queue wait is the
// router's), requests in flight, and CPU, over the process's life and over the last
// minute. Every attachment of the process (src/queue/attachment-base.js) records here,
// on either router, so the numbers mean the same on the hub and on HTTP.SYS. The
// preload sends snapshot() to the supervisor when asked (MSG.STATS).
//
// The hot path is two clock reads and a few array increments per request. The minute
// is a ring of one-second slots, moved on by a timer (unref'd) that also notes CPU
// time, so recording never checks the time of day.

const { performance } = require('node:perf_hooks')

/**
 * Latency bucket upper bounds in ms: ten per decade from 0.1 ms to 100 s, so a p99 read
 * from them is within 25% and every usual Prometheus bucket (1 ms, 2.5 ms, 5 ms, ...,
 * 10 s) is one of them.
 */
const BOUNDS = []
for (let decade = 0.1; decade < 1e5; decade *= 10) {
  for (const m of [1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 7.5]) BOUNDS.push(Math.round(decade * m * 1e4) / 1e4)
}
BOUNDS.push(1e5)
const NB = BOUNDS.length + 1 // the last bucket: above 100 s

/** Status classes, in the order of the counters; 'aborted': the client left first. */
const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx', 'aborted']
const ABORTED = 5

const SLOTS = 60
const SLOT_MS = 1000

function bucketOf (ms) {
  let lo = 0
  let hi = BOUNDS.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (ms <= BOUNDS[mid]) hi = mid
    else lo = mid + 1
  }
  return lo
}

function classOf (status) {
  const c = (status / 100) | 0
  return c >= 1 && c <= 5 ? c - 1 : 4
}

class RequestStats {
  constructor ({ now = () => performance.now(), cpuUsage = () => process.cpuUsage() } = {}) {
    this.now = now
    this.cpuUsage = cpuUsage
    this.inFlight = 0
    this.classes = new Float64Array(CLASSES.length)
    this.buckets = new Float64Array(NB)
    this.sumMs = 0
    // the minute: slot i counts what finished in one second; `cur` is being filled
    this.slotBuckets = Array.from({ length: SLOTS }, () => new Uint32Array(NB))
    this.slotClasses = Array.from({ length: SLOTS }, () => new Uint32Array(CLASSES.length))
    this.slotCpu = new Float64Array(SLOTS) // cpu µs at the start of the slot
    this.slotAt = new Float64Array(SLOTS) // time at the start of the slot
    this.cur = 0
    this.filled = 1 // slots holding data, the current one included
    this.startedAt = now()
    this.slotAt[0] = this.startedAt
    this.slotCpu[0] = cpuTotal(cpuUsage())
    this.timer = null
  }

  /** Starts the one-second ring; idempotent. The timer never keeps the process alive. */
  start () {
    if (this.timer !== null) return
    this.timer = setInterval(() => this.tick(), SLOT_MS)
    if (typeof this.timer.unref === 'function') this.timer.unref()
  }

  stop () {
    clearInterval(this.timer)
    this.timer = null
  }

  /** Moves to the next second (the timer's job; tests call it). */
  tick () {
    const next = (this.cur + 1) % SLOTS
    this.slotBuckets[next].fill(0)
    this.slotClasses[next].fill(0)
    this.slotAt[next] = this.now()
    this.slotCpu[next] = cpuTotal(this.cpuUsage())
    this.cur = next
    if (this.filled < SLOTS) this.filled++
  }

  /** A request arrived; returns its start time for done()/aborted(). */
  begin () {
    this.inFlight++
    return this.now()
  }

  /** Its last response byte was handed to the router. */
  done (start, status) {
    this.inFlight--
    const ms = this.now() - start
    const b = bucketOf(ms)
    const c = classOf(status)
    this.classes[c]++
    this.buckets[b]++
    this.sumMs += ms
    this.slotBuckets[this.cur][b]++
    this.slotClasses[this.cur][c]++
  }

  /** It ended without a complete response (the client left, the router reset it). */
  aborted () {
    this.inFlight--
    this.classes[ABORTED]++
    this.slotClasses[this.cur][ABORTED]++
  }

  /**
   * Plain data for IPC: life totals (cumulative, for Prometheus counters) and the last
   * minute (for req/s, p99, CPU %). Buckets are sparse [index, count] pairs.
   */
  snapshot () {
    const now = this.now()
    const oldest = (this.cur - this.filled + 1 + SLOTS) % SLOTS
    const minuteBuckets = new Float64Array(NB)
    const minuteClasses = new Float64Array(CLASSES.length)
    const perSecond = [] // requests ended in each whole second, oldest first
    for (let k = 0; k < this.filled; k++) {
      const s = (oldest + k) % SLOTS
      const sb = this.slotBuckets[s]
      for (let i = 0; i < NB; i++) minuteBuckets[i] += sb[i]
      const sc = this.slotClasses[s]
      let n = 0
      for (let i = 0; i < CLASSES.length; i++) {
        minuteClasses[i] += sc[i]
        n += sc[i]
      }
      if (s !== this.cur) perSecond.push(n)
    }
    const cpuNow = cpuTotal(this.cpuUsage())
    const windowMs = now - this.slotAt[oldest]
    return {
      uptimeMs: Math.round(now - this.startedAt),
      inFlight: this.inFlight,
      cpuMicros: cpuNow,
      total: { classes: Array.from(this.classes), buckets: sparse(this.buckets), sumMs: this.sumMs },
      minute: {
        ms: Math.round(windowMs),
        classes: Array.from(minuteClasses),
        buckets: sparse(minuteBuckets),
        perSecond,
        cpuMicros: cpuNow - this.slotCpu[oldest]
      }
    }
  }
}

function cpuTotal ({ user, system }) {
  return user + system
}

function sparse (arr) {
  const out = []
  for (let i = 0; i < arr.length; i++) if (arr[i] !== 0) out.push([i, arr[i]])
  return out
}

/**
 * The latency below which `q` of the counted requests fall, in ms (a bucket's upper
 * bound, so never below the truth), from sparse buckets of one or more snapshots.
 * @param {Array<Array<[number, number]>>} bucketLists
 * @returns {number|null} null when nothing was counted
 */
function quantile (bucketLists, q) {
  const counts = new Float64Array(NB)
  let n = 0
  for (const list of bucketLists) {
    for (const [i, c] of list) {
      if (i >= 0 && i < NB) {
        counts[i] += c
        n += c
      }
    }
  }
  if (n === 0) return null
  const rank = Math.ceil(q * n)
  let seen = 0
  for (let i = 0; i < NB; i++) {
    seen += counts[i]
    if (seen >= rank) return i < BOUNDS.length ? BOUNDS[i] : Infinity
  }
  return Infinity
}

// one per process: every attachment records into it
let shared = null
function processStats () {
  if (shared === null) shared = new RequestStats()
  return shared
}

module.exports = { RequestStats, processStats, quantile, bucketOf, BOUNDS, CLASSES }
