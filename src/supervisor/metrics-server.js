'use strict'

// The supervisor's metrics endpoint (config `metrics: { listen }`, `--metrics`): what
// Prometheus scrapes and what a load balancer's health check asks.
//
//   GET /metrics          Prometheus text format (prom-client serialises it)
//   GET /healthz          200 when every app can serve (an instance ready), else 503
//   GET /healthz/<app>    the same for one app (404 for an app this supervisor lacks)
//
// One scrape asks every worker once (src/supervisor/app-stats.js); the metrics below
// read that one snapshot. Per-instance series carry `app` and `inst` (not `instance`:
// Prometheus sets that label itself for the scrape target); a restarted instance's
// counters start again from 0, which rate() and increase() read as a reset. The
// supervisor's own process metrics come from prom-client's defaults.

const http = require('node:http')
const { Registry, collectDefaultMetrics } = require('prom-client')
const { BOUNDS, CLASSES } = require('./app-stats')

// Prometheus's usual buckets (seconds); each is one of request-stats.js's bounds
const LE_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
const LE_INDEX = LE_SECONDS.map((s) => {
  const i = BOUNDS.findIndex((b) => Math.abs(b - s * 1000) < 1e-9)
  if (i === -1) throw new Error(`bucket ${s}s is not a bound of request-stats.js`)
  return i
})

class MetricsServer {
  /**
   * @param {object} options
   * @param {object} options.supervisor status({ raw: true }) and groups
   * @param {{ host: string, port: number }} options.listen
   * @param {import('pino').Logger} options.logger
   */
  constructor ({ supervisor, listen, logger }) {
    this.supervisor = supervisor
    this.listen = listen
    this.logger = logger
    this.server = null
    this.snapshot = null
    this.registry = new Registry()
    collectDefaultMetrics({ register: this.registry, prefix: 'httpsys_supervisor_' })
    for (const metric of this.metrics()) this.registry.registerMetric(metric)
  }

  /** @returns {Promise<void>} rejects with ERR_HTTPSYS_METRICS_LISTEN (port taken, bad host) */
  start () {
    const { codes } = require('../errors')
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        this.logger.error({ event: 'metrics:error', err }, `metrics endpoint: ${err.message}`)
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' })
        res.end('internal error\n')
      })
    })
    // a scraper that keeps its connection open must not hold the supervisor's stop
    this.server.keepAliveTimeout = 5000
    return new Promise((resolve, reject) => {
      this.server.once('error', (err) => reject(new codes.ERR_HTTPSYS_METRICS_LISTEN({ ...this.listen, reason: err.code || err.message })))
      this.server.listen(this.listen.port, this.listen.host, () => {
        this.server.on('error', (err) => this.logger.error({ event: 'metrics:error', err }, `metrics endpoint: ${err.message}`))
        const { address, port } = this.server.address()
        this.url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`
        this.logger.info({ event: 'metrics', endpoint: this.url }, `metrics on ${this.url}/metrics, readiness on ${this.url}/healthz`)
        resolve()
      })
    })
  }

  close () {
    if (this.server === null) return Promise.resolve()
    const server = this.server
    this.server = null
    return new Promise((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  }

  async handle (req, res) {
    let url
    try {
      url = new URL(req.url, 'http://localhost')
    } catch {
      return badRequest(res, 'not a request target this endpoint understands')
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' })
      return res.end('only GET\n')
    }
    if (url.pathname === '/metrics') {
      this.snapshot = await this.supervisor.status({ raw: true })
      const body = await this.registry.metrics()
      res.writeHead(200, { 'content-type': this.registry.contentType })
      return res.end(req.method === 'HEAD' ? undefined : body)
    }
    const m = /^\/healthz(?:\/([^/]+))?\/?$/.exec(url.pathname)
    if (m) {
      let name
      try {
        name = m[1] === undefined ? undefined : decodeURIComponent(m[1])
      } catch {
        // a broken percent-escape (/healthz/%E0%A4) is the client's mistake: a 400, not a
        // 500 with an error record and its stack on every probe
        return badRequest(res, 'the app name has a malformed percent-escape')
      }
      return this.health(req, res, name)
    }
    res.writeHead(404, { 'content-type': 'text/plain' })
    res.end('not found: /metrics, /healthz, /healthz/<app>\n')
  }

  /** Ready: each app (or the one named) has an instance ready and has not errored. */
  health (req, res, name) {
    const groups = this.supervisor.groups.filter((g) => name === undefined || g.name === name)
    if (name !== undefined && groups.length === 0) {
      res.writeHead(404, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ status: 'unknown', app: name }) + '\n')
    }
    const apps = groups.map((g) => ({
      name: g.name,
      state: g.state(),
      ready: g.instances.filter((i) => i.state === 'ready').length,
      instances: g.instances.length
    }))
    const ok = apps.length > 0 && apps.every((a) => a.ready > 0)
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ status: ok ? 'ready' : 'unavailable', apps }) + '\n')
  }

  /** prom-client metrics whose values come from the scrape's snapshot. */
  metrics () {
    const apps = () => (this.snapshot ? this.snapshot.apps : [])
    const perInstance = (fn) => () => {
      const values = []
      for (const app of apps()) {
        for (const i of app.instances) {
          const v = fn(i, app)
          if (v !== null && v !== undefined) values.push({ labels: { app: app.name, inst: String(i.inst) }, value: v })
        }
      }
      return values
    }
    const metric = (name, type, help, values) => ({
      name,
      help,
      type,
      get: async () => ({ name, help, type, values: values() })
    })
    return [
      metric('httpsys_requests_total', 'counter', 'Requests answered by the worker, by status class (aborted: the client left first)', () => {
        const values = []
        for (const app of apps()) {
          for (const i of app.instances) {
            if (!i.raw) continue
            CLASSES.forEach((cls, k) => values.push({ labels: { app: app.name, inst: String(i.inst), class: cls }, value: i.raw.total.classes[k] }))
          }
        }
        return values
      }),
      metric('httpsys_request_duration_seconds', 'histogram', 'From the request reaching the worker to its last response byte handed to the router', () => {
        const values = []
        for (const app of apps()) {
          for (const i of app.instances) {
            if (!i.raw) continue
            const labels = { app: app.name, inst: String(i.inst) }
            const counts = new Float64Array(BOUNDS.length + 1)
            let count = 0
            for (const [b, n] of i.raw.total.buckets) {
              counts[b] += n
              count += n
            }
            let cum = 0
            let upTo = 0
            LE_SECONDS.forEach((le, k) => {
              for (; upTo <= LE_INDEX[k]; upTo++) cum += counts[upTo]
              values.push({ metricName: 'httpsys_request_duration_seconds_bucket', labels: { ...labels, le }, value: cum })
            })
            values.push({ metricName: 'httpsys_request_duration_seconds_bucket', labels: { ...labels, le: '+Inf' }, value: count })
            values.push({ metricName: 'httpsys_request_duration_seconds_sum', labels, value: i.raw.total.sumMs / 1000 })
            values.push({ metricName: 'httpsys_request_duration_seconds_count', labels, value: count })
          }
        }
        return values
      }),
      metric('httpsys_requests_in_flight', 'gauge', 'Requests the worker has received and not answered yet', perInstance((i) => i.raw ? i.raw.inFlight : null)),
      metric('httpsys_queue_waiting', 'gauge', 'Requests waiting in the app\'s queue for a worker (hub only: HTTP.SYS does not say)', () =>
        apps().filter((a) => a.waiting !== null && a.waiting !== undefined).map((a) => ({ labels: { app: a.name }, value: a.waiting }))),
      // the router's output cache (hub only: HTTP.SYS keeps its cache's numbers machine-wide)
      metric('httpsys_cache_requests_total', 'counter', 'GET and HEAD requests the app\'s output cache answered (hit) or passed on to the app (miss)', () =>
        apps().filter((a) => a.cache).flatMap((a) => [
          { labels: { app: a.name, result: 'hit' }, value: a.cache.hits },
          { labels: { app: a.name, result: 'miss' }, value: a.cache.misses }
        ])),
      metric('httpsys_cache_evictions_total', 'counter', 'Entries of the app the output cache dropped for memory', () =>
        apps().filter((a) => a.cache).map((a) => ({ labels: { app: a.name }, value: a.cache.evictions }))),
      metric('httpsys_cache_entries', 'gauge', 'Responses of the app the output cache holds', () =>
        apps().filter((a) => a.cache).map((a) => ({ labels: { app: a.name }, value: a.cache.entries }))),
      metric('httpsys_cache_bytes', 'gauge', 'Body bytes of the app\'s responses the output cache holds', () =>
        apps().filter((a) => a.cache).map((a) => ({ labels: { app: a.name }, value: a.cache.bytes }))),
      metric('httpsys_app_ready', 'gauge', '1 when the app has an instance ready to serve', () =>
        apps().map((a) => ({ labels: { app: a.name }, value: a.instances.some((i) => i.state === 'ready') ? 1 : 0 }))),
      metric('httpsys_instance_ready', 'gauge', '1 when the instance is ready', perInstance((i) => i.state === 'ready' ? 1 : 0)),
      metric('httpsys_instance_restarts_total', 'counter', 'Restarts of the instance since the supervisor started', perInstance((i) => i.restarts)),
      metric('httpsys_instance_resident_memory_bytes', 'gauge', 'Resident memory of the instance\'s process', perInstance((i) => i.memory)),
      metric('httpsys_instance_cpu_seconds_total', 'counter', 'CPU time (user and system) of the instance\'s process', perInstance((i) => i.raw ? i.raw.cpuMicros / 1e6 : null)),
      // the native router's own process (issue 25; the hub runs in the supervisor's)
      metric('httpsys_router_cpu_seconds_total', 'counter', 'CPU time (user and system) of the router\'s process (native router only)', () =>
        this.snapshot && this.snapshot.router ? [{ labels: {}, value: this.snapshot.router.cpuMicros / 1e6 }] : []),
      metric('httpsys_router_resident_memory_bytes', 'gauge', 'Resident memory of the router\'s process (native router only)', () =>
        this.snapshot && this.snapshot.router && this.snapshot.router.memory ? [{ labels: {}, value: this.snapshot.router.memory }] : []),
      metric('httpsys_router_connections', 'gauge', 'Client connections open on the native router (HTTP.SYS does not say)', () =>
        this.snapshot && typeof this.snapshot.connections === 'number' ? [{ labels: {}, value: this.snapshot.connections }] : [])
    ]
  }
}

function badRequest (res, reason) {
  res.writeHead(400, { 'content-type': 'text/plain' })
  res.end(`bad request: ${reason}\n`)
}

module.exports = { MetricsServer, LE_SECONDS }
