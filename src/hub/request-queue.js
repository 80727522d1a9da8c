'use strict'

// A named request queue: its URL prefixes, the requests waiting for a worker, and the
// workers attached to it. As with HTTP.SYS, requests wait here while no worker can
// receive (none attached, or all out of receive credit) and a queue with zero workers
// still queues: that is how a restarting app loses nothing. Only a full queue answers
// 503.

const { TICK } = require('./clock')

/** A FIFO with cheap removal at the front and re-insertion at the front. */
class Deque {
  constructor () {
    this.items = []
    this.head = 0
  }

  get size () {
    return this.items.length - this.head
  }

  push (x) {
    this.items.push(x)
  }

  unshift (x) {
    if (this.head > 0) this.items[--this.head] = x
    else this.items.unshift(x)
  }

  peek () {
    return this.head < this.items.length ? this.items[this.head] : undefined
  }

  shift () {
    if (this.head >= this.items.length) return undefined
    const x = this.items[this.head]
    this.items[this.head++] = undefined
    if (this.head === this.items.length) {
      this.items.length = 0
      this.head = 0
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return x
  }

  /** Removes and returns every item. */
  drain () {
    const out = this.items.slice(this.head)
    this.items = []
    this.head = 0
    return out
  }
}

class RequestQueue {
  /**
   * @param {string} name
   * @param {object} opts
   * @param {number} opts.queueLength requests that may wait before 503
   * @param {number} [opts.queueTimeout=0] ms a request may wait for a worker (0: forever)
   * @param {number} opts.maxBodySize request bodies above this get 413
   * @param {object|null} [opts.owner] the worker connection whose disconnect removes the queue
   */
  constructor (name, { queueLength, queueTimeout = 0, maxBodySize, owner = null }) {
    this.name = name
    this.urls = []
    this.urlPorts = []
    this.urlIps = [] // the address of each IP-bound prefix (its port listens only there), else null
    this.bound = true // its prefixes are routed (false after hub.unbindQueue)
    this.reserved = false // a standalone server's queue (hub.reserveQueue)
    this.path = null // a standalone listen(path): the socket path it listens on (hub.reservePath)
    this.settings = null // a standalone server's timeouts and head rules for its connections
    this.refed = true // its ports keep the process alive (hub.setQueueRef)
    this.queueLength = queueLength
    this.queueTimeout = queueTimeout
    this.maxBodySize = maxBodySize
    this.owner = owner
    this.token = null // a worker must present it to attach (hub.js onHello)
    this.claimed = null // the prefixes the first worker asked for, when the queue had none
    this.unavailable = false // the app cannot serve again without a command (hub.js setQueueAvailable)
    this.redirect = null // a queue never redirects (redirect.js targets do)
    this.attachments = []
    this.rr = 0
    this.waiting = new Deque()
    this.waitingCount = 0 // live entries in `waiting` (aborted ones are skipped lazily)
    this.served = 0
    this.deleted = false
    // the output cache (output-cache.js), null when off for this app; its counters; and
    // the generation of the app's instances a stored response must come from
    this.outputCache = null
    this.cacheStats = { hits: 0, misses: 0, stores: 0, evictions: 0, entries: 0, bytes: 0 }
    this.cacheEpoch = 0
  }

  /**
   * A request arrived for this queue: give it to a worker now, or let it wait.
   * @returns {boolean} false when the queue is full (the caller answers 503)
   */
  enqueue (req) {
    if (this.waitingCount === 0) {
      const w = this.pick()
      if (w !== null) {
        w.dispatch(req)
        return true
      }
    }
    if (this.waitingCount >= this.queueLength) return false
    req.queue = this
    req.waiting = true
    this.waiting.push(req)
    this.waitingCount++
    return true
  }

  /** A request its worker never saw goes back to the front (its order is kept). */
  requeueFront (req) {
    req.waiting = true
    this.waiting.unshift(req)
    this.waitingCount++
  }

  /** The request left the queue without being dispatched (client gone, 503). */
  forget (req) {
    if (req.waiting) {
      req.waiting = false
      this.waitingCount--
    }
  }

  /** Hands waiting requests to workers while any can take one. */
  pump () {
    while (this.waitingCount > 0) {
      const w = this.pick()
      if (w === null) return
      const req = this.waiting.shift()
      if (req === undefined) {
        this.waitingCount = 0
        return
      }
      if (!req.waiting) continue // aborted while waiting
      req.waiting = false
      this.waitingCount--
      w.dispatch(req)
    }
  }

  /**
   * Pull model, as HTTP.SYS: only a worker with free receive credit can take a request;
   * among those the one with the fewest requests in flight, round-robin on ties.
   * @returns {object|null} a worker connection
   */
  pick () {
    const ws = this.attachments
    const n = ws.length
    if (n === 1) return ws[0].canTake() ? ws[0] : null
    let best = null
    let bestLoad = Infinity
    let bestIndex = 0
    for (let k = 0; k < n; k++) {
      let i = this.rr + k
      if (i >= n) i -= n
      const w = ws[i]
      if (w.inFlight < bestLoad && w.canTake()) {
        best = w
        bestLoad = w.inFlight
        bestIndex = i
      }
    }
    if (best !== null) this.rr = bestIndex + 1 >= n ? 0 : bestIndex + 1
    return best
  }

  addWorker (w) {
    this.unavailable = false
    this.attachments.push(w)
  }

  removeWorker (w) {
    const i = this.attachments.indexOf(w)
    if (i !== -1) this.attachments.splice(i, 1)
    if (this.rr >= this.attachments.length) this.rr = 0
  }

  /**
   * Takes out the requests that arrived more than queueTimeout ago and still wait
   * (HTTP.SYS's RequestQueue timer). Arrival order is queue order, so the scan stops at
   * the first request still in time.
   * @param {number} now ms
   * @returns {object[]} the expired requests, for the caller to answer
   */
  expire (now) {
    const out = []
    if (!(this.queueTimeout > 0)) return out
    // arrived is the coarse clock's, up to a tick early: never expire before the time
    const limit = now - this.queueTimeout - TICK
    const w = this.waiting
    while (w.size > 0) {
      const req = w.peek()
      if (req.waiting && req.arrived > limit) break
      w.shift()
      if (!req.waiting) continue // left already (client gone); skipped lazily
      req.waiting = false
      this.waitingCount--
      out.push(req)
    }
    return out
  }

  /** Removes every waiting request (live ones only). */
  takeWaiting () {
    const out = []
    for (const req of this.waiting.drain()) {
      if (req.waiting) {
        req.waiting = false
        out.push(req)
      }
    }
    this.waitingCount = 0
    return out
  }

  get inFlight () {
    let n = 0
    for (const w of this.attachments) n += w.inFlight
    return n
  }

  addUrl (prefix, port, ip = null) {
    this.urls.push(prefix)
    this.urlPorts.push(port)
    this.urlIps.push(ip)
  }

  ports () {
    return [...new Set(this.urlPorts)]
  }

  stats () {
    return {
      name: this.name,
      urls: this.urls.slice(),
      waiting: this.waitingCount,
      inFlight: this.inFlight,
      served: this.served,
      workers: this.attachments.map((w) => ({ id: w.id, pid: w.pid, inFlight: w.inFlight, served: w.served })),
      cache: this.outputCache === null ? null : { ...this.cacheStats }
    }
  }
}

module.exports = { RequestQueue, Deque }
