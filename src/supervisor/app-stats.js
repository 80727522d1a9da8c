'use strict'

// What `httpsys ls`, `httpsys monit`, `show` and the metrics endpoint read: every app and
// instance with its process's numbers. Each worker counts its own requests
// (src/queue/request-stats.js, the same on the hub and on HTTP.SYS) and answers
// MSG.STATS; the router adds what only it knows (requests waiting in the queue, client
// connections: the hub; HTTP.SYS keeps its queue depth to itself, so there it is null).
// A worker that does not answer in time (busy, hung) shows what the process table
// says (memory) and nulls elsewhere: a slow worker never makes ls slow.

const { quantile, BOUNDS, CLASSES } = require('../queue/request-stats')
const { rssOf } = require('./memory')

const ASK_TIMEOUT_MS = 500

/**
 * @param {object} supervisor a Supervisor (groups, queueStats(), router)
 * @returns {Promise<object[]>} one entry per app
 */
async function collectApps (supervisor, { timeout = ASK_TIMEOUT_MS } = {}) {
  return Promise.all(supervisor.groups.map(async (g) => {
    const queue = supervisor.queueStats(g.name)
    const instances = await Promise.all(g.instances.map((instance) => instanceStats(instance, queue, timeout)))
    return appStats(g, queue, instances, supervisor.servedUrls(g))
  }))
}

async function instanceStats (instance, queue, timeout) {
  const info = instance.info()
  const proc = instance.proc && !instance.proc.exitInfo ? instance.proc : null
  const reply = proc ? await proc.askStats(timeout) : null
  const req = reply && reply.requests ? reply.requests : null
  const routerSide = queue ? queue.workers.filter((x) => x.pid === info.pid) : []
  const memory = reply && typeof reply.rss === 'number' ? reply.rss : proc ? await rssOf(proc) : null
  return {
    ...info,
    memory,
    cpu: req ? cpuPercent(req, reply.processUptimeMs) : null,
    // answered requests (any status) over the process's life
    served: req ? answered(req.total.classes) : routerSide.reduce((n, x) => n + x.served, 0),
    inFlight: req ? req.inFlight : routerSide.reduce((n, x) => n + x.inFlight, 0),
    reqPerSec: req ? perSecond(req.minute) : null,
    p99Ms: req ? quantile([req.minute.buckets], 0.99) : null,
    // the raw numbers, for the metrics endpoint and monit (not in ls --json)
    raw: req
  }
}

// urls: where the app is served: its config's urls, or what its first listen() bound
function appStats (g, queue, instances, urls = g.app.urls) {
  const live = instances.filter((i) => i.raw)
  const rates = live.map((i) => i.reqPerSec)
  return {
    name: g.name,
    state: g.state(),
    type: g.app.type,
    urls,
    watching: g.watching,
    // requests waiting in the router's queue for a worker (null: the router does not say)
    waiting: queue ? queue.waiting : null,
    // the router's output cache for the app: { hits, misses, stores, evictions, entries,
    // bytes } (null: off for the app, or the router does not say: HTTP.SYS keeps its
    // cache's numbers machine-wide, `netsh http show cachestate`)
    cache: queue && queue.cache ? { ...queue.cache } : null,
    reqPerSec: live.length ? round(rates.reduce((a, b) => a + b, 0)) : null,
    p99Ms: live.length ? quantile(live.map((i) => i.raw.minute.buckets), 0.99) : null,
    // requests per second over the last minute, oldest first (the sum of the instances)
    history: sumSeries(live.map((i) => i.raw.minute.perSecond || [])),
    instances
  }
}

function answered (classes) {
  let n = 0
  for (let i = 0; i < classes.length; i++) if (CLASSES[i] !== 'aborted') n += classes[i]
  return n
}

function perSecond (minute) {
  if (!minute || minute.ms <= 0) return 0
  let n = 0
  for (const c of minute.classes) n += c
  return round(n / Math.max(1, minute.ms / 1000))
}

/** CPU time over the last minute (or the process's life when younger than a second), in % of one core. */
function cpuPercent (req, processUptimeMs) {
  const m = req.minute
  if (m && m.ms >= 1000) return round(m.cpuMicros / (m.ms * 10))
  if (processUptimeMs > 0) return round(req.cpuMicros / (processUptimeMs * 10))
  return null
}

function sumSeries (series) {
  const len = Math.max(0, ...series.map((s) => s.length))
  const out = new Array(len).fill(0)
  // align on the newest second
  for (const s of series) for (let i = 0; i < s.length; i++) out[len - s.length + i] += s[i]
  return out
}

function round (x) {
  return Math.round(x * 10) / 10
}

/** Drops the raw numbers: what ls --json and show print. */
function publicView (apps) {
  return apps.map((app) => ({
    ...app,
    instances: app.instances.map(({ raw, ...i }) => i)
  }))
}

module.exports = { collectApps, publicView, BOUNDS, CLASSES }
