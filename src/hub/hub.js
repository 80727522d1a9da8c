'use strict'

// The hub: the router role of HTTP.SYS in JavaScript (docs/architecture.md 1). It owns
// the TCP listeners, terminates TLS on https ports (certificates from the config or from
// the apps, tls-store.js), parses HTTP/1.1 and serves HTTP/2 by ALPN, routes each request
// by URL prefix to a named request queue, and hands queued requests to the workers
// attached to that queue over a local socket (src/wire/protocol.js). It lives inside the
// supervisor, or in-process for a standalone app (src/queue/index.js).

const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const { EventEmitter } = require('node:events')
const { codes } = require('../errors')
const { parse, RoutingTable, hostnameOf } = require('../urlprefix')
const { Listeners } = require('./listeners')
const { RequestQueue } = require('./request-queue')
const { ClientConnection } = require('./client-connection')
const { H2Connection } = require('./h2-connection')
const { AttachmentConnection } = require('./attachment-connection')
const { TlsStore } = require('../tls-store')
const { createTlsServer, refresh, tlsInfoOf } = require('./tls-server')
const { Redirect } = require('./redirect')
const { T, encodeTlsInfo, decodeTlsOptions } = require('../wire/protocol')
const { isInvalidUrl } = require('./request-target')
const { OutputCache } = require('./output-cache')
const clock = require('./clock')

// Every request string travels with a u16 length (src/wire/protocol.js).
const MAX_HEADER_SIZE_LIMIT = 65535

class Hub extends EventEmitter {
  /**
   * @param {object} opts
   * @param {string} opts.socketPath where workers attach (Unix socket; a named pipe on Windows)
   * @param {object} [opts.logger] pino logger (default: the httpsys logger, component hub)
   * @param {number} [opts.maxHeaderSize=16384] bytes of request line + headers (431 above)
   * @param {number} [opts.maxBodySize=104857600] request body bytes (413 above); per queue too
   * @param {number} [opts.queueLength=1000] requests that may wait in a queue (503 above)
   * @param {number} [opts.maxConnections=0] client connections per port (0: no limit);
   *   beyond it new connections are refused, as HTTP.SYS's MaxConnections does
   *
   * Timeouts, in ms, checked by one 1 s clock (so up to a second late); 0 turns one off.
   * They are HTTP.SYS's timers (HTTP_TIMEOUT_LIMIT_INFO); the defaults are node's where
   * node has the timer, else HTTP.SYS's 2 minutes. No minimum send rate (MinSendRate):
   * a slow reader only slows its own worker down (response window).
   * @param {number} [opts.queueTimeout=120000] RequestQueue: a request no worker took
   *   within this long gets 503 with Retry-After; per queue too (createQueue)
   * @param {number} [opts.keepAliveTimeout=5000] IdleConnection: an idle keep-alive
   *   connection is closed after this long
   * @param {number} [opts.headersTimeout=60000] HeaderWait: a request head must be
   *   complete this long after the connection opened or its first byte arrived
   * @param {number} [opts.bodyTimeout=120000] EntityBody: the longest pause between two
   *   pieces of a request body while the hub is reading it (never while the app is not
   *   reading); then the connection is reset and the worker gets an abort
   * @param {number} [opts.drainTimeout=120000] DrainEntityBody: after the response, the
   *   rest of a request body nobody reads must arrive within this long
   * @param {number} [opts.closeTimeout=5000] ms close() waits for in-flight responses
   * @param {boolean} [opts.embedded=false] in-process hub: its worker sockets keep no process alive
   * @param {boolean} [opts.workersMayCreate=true] a worker's HELLO may create a queue (a
   *   standalone app's own hub); a supervisor's hub makes every queue itself
   * @param {object[]} [opts.tls=[]] certificates (the config's `tls` entries: { port,
   *   host?, cert, key | pfx, passphrase?, ca?, requestCert?, rejectUnauthorized? }, paths
   *   or PEM text); they win over certificates apps send at attach
   * @param {boolean} [opts.h2=true] offer HTTP/2 by ALPN on TLS ports
   * @param {number} [opts.finGrace=100] ms an app has to answer a client that half-closed
   *   (FIN) before its unanswered requests are aborted (client-connection.js)
   * @param {number} [opts.cacheSize=67108864] bytes the output cache may hold for all
   *   queues together (output-cache.js); 0 turns the cache off
   * @param {number} [opts.cacheMaxResponse=262144] the largest response body it stores
   */
  constructor ({
    socketPath,
    logger,
    maxHeaderSize = 16384,
    maxBodySize = 100 * 1024 * 1024,
    queueLength = 1000,
    maxConnections = 0,
    queueTimeout = 120000,
    keepAliveTimeout = 5000,
    headersTimeout = 60000,
    bodyTimeout = 120000,
    drainTimeout = 120000,
    closeTimeout = 5000,
    finGrace = 100,
    embedded = false,
    workersMayCreate = true,
    tls = [],
    h2 = true,
    cacheSize = 64 * 1024 * 1024,
    cacheMaxResponse = 256 * 1024
  } = {}) {
    super()
    if (typeof socketPath !== 'string' || socketPath === '') {
      throw new codes.ERR_INVALID_ARG_TYPE({ name: 'socketPath', expected: 'a non-empty string', actual: socketPath })
    }
    if (!(maxHeaderSize > 0 && maxHeaderSize <= MAX_HEADER_SIZE_LIMIT)) {
      throw new codes.ERR_INVALID_ARG_VALUE({ name: 'maxHeaderSize', value: maxHeaderSize, reason: `must be between 1 and ${MAX_HEADER_SIZE_LIMIT}` })
    }
    for (const [name, value] of Object.entries({ queueTimeout, keepAliveTimeout, headersTimeout, bodyTimeout, drainTimeout })) {
      if (!(typeof value === 'number' && value >= 0)) {
        throw new codes.ERR_INVALID_ARG_VALUE({ name, value, reason: 'must be a number of milliseconds, 0 or more (0 turns the timeout off)' })
      }
    }
    this.socketPath = socketPath
    this.log = logger || require('../logger').child({ component: 'hub' })
    this.maxHeaderSize = maxHeaderSize
    this.maxBodySize = maxBodySize
    this.queueLength = queueLength
    this.queueTimeout = queueTimeout
    this.keepAliveTimeout = keepAliveTimeout
    this.headersTimeout = headersTimeout
    this.bodyTimeout = bodyTimeout
    this.drainTimeout = drainTimeout
    this.closeTimeout = closeTimeout
    this.finGrace = finGrace
    this.embedded = embedded
    this.workersMayCreate = workersMayCreate
    this.table = new RoutingTable()
    this.h2 = h2
    this.tlsStore = new TlsStore({ log: this.log, watch: !embedded })
    this.tlsStore.on('change', (port) => this.refreshTls(port))
    this.tlsCounts = { handshakes: 0, failures: 0, byReason: Object.create(null) }
    this.listeners = new Listeners((socket, port) => this.onClientSocket(socket, port), this.log, maxConnections,
      (port) => createTlsServer({
        port,
        store: this.tlsStore,
        handshakeTimeout: this.headersTimeout,
        h2: this.h2,
        onSecure: (socket, p, verdict) => this.onSecureSocket(socket, p, verdict),
        onFailure: (p, err, socket) => this.tlsFailed(p, err, socket)
      }),
      (port) => this.portClosed(port))
    if (tls.length > 0) this.tlsStore.setConfig(tls)
    this.queuesByName = new Map()
    this.conns = new Set()
    this.connsById = new Map() // connection id -> ClientConnection | H2Connection (CONN_END)
    this.portSettings = new Map() // port -> a standalone server's settings (reserveQueue)
    this.requireHostHeader = true
    this.attachments = new Set()
    this.connSeq = 0
    this.attachmentSeq = 0
    this.anonSeq = 0
    this.redirects = new Map() // app -> [{ prefix, port }]
    this.server = null
    this.started = false
    this.closing = false
    this.closePromise = null
    this.onConnsGone = null
    this.stopClock = null
    this.routeArgs = { scheme: 'http', port: 0, host: undefined, localAddress: '', path: '/' }
    this.cache = cacheSize > 0 ? new OutputCache({ maxSize: cacheSize, maxResponseSize: cacheMaxResponse }) : null
    this.sweeps = 0
  }

  /** Listens for workers on socketPath (a stale socket file is removed first). */
  async start () {
    if (this.started) return
    this.started = true
    if (process.platform !== 'win32') {
      try {
        fs.unlinkSync(this.socketPath)
      } catch (err) {
        if (err.code !== 'ENOENT') throw err
      }
    }
    const server = net.createServer((socket) => this.onWorkerSocket(socket))
    await new Promise((resolve, reject) => {
      server.once('error', reject)
      // Another user must not attach to a queue (and receive its requests): the socket is
      // the owner's only, 0600. The umask covers the moment between bind and chmod; it
      // cannot be set in a worker thread, where the chmod alone does it.
      const umask = setUmask(0o177)
      try {
        server.listen(this.socketPath, () => {
          server.removeListener('error', reject)
          if (process.platform !== 'win32') {
            try {
              fs.chmodSync(this.socketPath, 0o600)
            } catch (err) {
              server.close()
              return reject(err)
            }
          }
          resolve()
        })
      } finally {
        if (umask !== null) setUmask(umask)
      }
    })
    server.on('error', (err) => this.log.error({ err }, 'worker socket error'))
    if (this.embedded) server.unref()
    this.server = server
    this.stopClock = clock.every((now) => this.sweep(now))
    this.log.debug({ socketPath: this.socketPath }, 'hub started')
  }

  /**
   * Creates a named request queue and registers its URL prefixes (binding their ports).
   * @param {string} name
   * @param {object} [opts]
   * @param {string[]} [opts.urls=[]] UrlPrefix strings; a port of 0 binds a free port
   * @param {number} [opts.queueLength] default: the hub's
   * @param {number} [opts.queueTimeout] ms a request may wait for a worker; default: the hub's
   * @param {number} [opts.maxBodySize] default: the hub's
   * @param {string|null} [opts.token] a worker must present it in HELLO to attach
   * @param {boolean} [opts.cache=true] the output cache serves this queue (its workers
   *   say which responses may be stored: output-cache.js)
   * @returns {Promise<{name: string, urls: string[], ports: number[]}>}
   * @throws ERR_HTTPSYS_QUEUE_EXISTS, ERR_HTTPSYS_BAD_PREFIX, ERR_HTTPSYS_URL_CONFLICT,
   *   ERR_HTTPSYS_PORT_IN_USE, ERR_HTTPSYS_ACCESS_DENIED
   */
  async createQueue (name, { urls = [], queueLength, queueTimeout, maxBodySize, token = null, cache = true } = {}) {
    return this.makeQueue(name, { urls, queueLength, queueTimeout, maxBodySize, owner: null, token, cache })
  }

  async makeQueue (name, { urls, queueLength, queueTimeout, maxBodySize, owner, token = null, cache = true }) {
    if (typeof name !== 'string' || name === '') {
      throw new codes.ERR_INVALID_ARG_TYPE({ name: 'name', expected: 'a non-empty string', actual: name })
    }
    if (this.queuesByName.has(name)) throw new codes.ERR_HTTPSYS_QUEUE_EXISTS({ queue: name })
    const q = new RequestQueue(name, {
      queueLength: queueLength ?? this.queueLength,
      queueTimeout: queueTimeout ?? this.queueTimeout,
      maxBodySize: maxBodySize ?? this.maxBodySize,
      owner
    })
    q.token = token
    q.outputCache = cache ? this.cache : null
    this.queuesByName.set(name, q)
    try {
      await this.registerUrls(q, urls)
    } catch (err) {
      if (this.queuesByName.get(name) === q) this.queuesByName.delete(name)
      throw err
    }
    this.log.debug({ queue: name, urls: q.urls }, 'queue created')
    return { name, urls: q.urls.slice(), ports: q.ports() }
  }

  /**
   * Adds URL prefixes to an existing queue.
   * @returns {Promise<string[]>} the queue's prefixes, port 0 resolved
   */
  async addUrls (name, urls) {
    const q = this.queuesByName.get(name)
    if (q === undefined) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: name })
    await this.registerUrls(q, urls)
    return q.urls.slice()
  }

  /**
   * Removes URL prefixes from a queue (a config edit applied by `httpsys reload`): new
   * requests for them are routed as if they never were (to a shorter prefix, or 503);
   * the ones in flight finish. A port no prefix uses any more stops listening.
   * @param {string} name
   * @param {string[]} prefixes as the queue holds them (queueStats().urls)
   * @returns {string[]} the queue's prefixes left
   */
  removeUrls (name, prefixes) {
    const q = this.queuesByName.get(name)
    if (q === undefined) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: name })
    for (const prefix of prefixes) {
      const i = q.urls.indexOf(prefix)
      if (i === -1) continue
      q.urls.splice(i, 1)
      const [port] = q.urlPorts.splice(i, 1)
      const [ip] = q.urlIps.splice(i, 1)
      this.table.remove(prefix)
      this.listeners.release(port, ip)
    }
    // what a first instance's listen() claimed is the supervisor's to change now
    q.claimed = null
    this.invalidateCache(q)
    return q.urls.slice()
  }

  /** Takes back what addRedirect() gave a queue (its https prefixes changed). */
  removeRedirects (name) {
    for (const { prefix, port, ip } of this.redirects.get(name) || []) {
      this.table.remove(prefix)
      this.listeners.release(port, ip)
    }
    this.redirects.delete(name)
  }

  /** Removes a queue: waiting requests get 503, attached workers are closed. */
  async deleteQueue (name) {
    const q = this.queuesByName.get(name)
    if (q === undefined) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: name })
    this.removeQueue(q)
  }

  /** @returns {{name, urls, waiting, inFlight, served, workers: object[]}} */
  queueStats (name) {
    const q = this.queuesByName.get(name)
    if (q === undefined) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: name })
    return q.stats()
  }

  /** @returns {string[]} queue names */
  queues () {
    return [...this.queuesByName.keys()]
  }

  /** @returns {object|null} the bound address of the listener on port */
  address (port) {
    return this.listeners.address(port)
  }

  /**
   * Empties a queue's output cache entries: an instance attached or left (a start,
   * restart, reload or crash), or the queue went. Responses on their way to the cache
   * are not stored.
   */
  invalidateCache (q) {
    q.cacheEpoch++
    if (q.outputCache !== null) q.outputCache.clearQueue(q)
  }

  /**
   * Replaces the certificates the config gives (each is loaded and checked first).
   * @param {object[]} entries see the constructor's opts.tls
   * @throws ERR_HTTPSYS_TLS_CERT naming the file
   */
  setTls (entries) {
    this.tlsStore.setConfig(entries)
  }

  /**
   * Re-reads the config's certificate files (`httpsys reload`); a file that fails keeps
   * the certificate loaded before and is reported. Connections up keep their session.
   * @returns {{label: string, changed: boolean, error?: Error}[]}
   */
  reloadTls () {
    return this.tlsStore.reload()
  }

  /** @returns {{handshakes: number, failures: number, byReason: object}} TLS handshakes since start */
  tlsStats () {
    return { handshakes: this.tlsCounts.handshakes, failures: this.tlsCounts.failures, byReason: { ...this.tlsCounts.byReason } }
  }

  /**
   * An app's redirect_http: plain http requests on `port` for the hosts and paths of its
   * https prefixes get a 308 to the same URL over https (redirect.js).
   * @param {string} name the app (its queue)
   * @param {number} port the plain http port
   * @param {string[]} urls the app's prefixes (its https ones are redirected to)
   * @returns {Promise<string[]>} the http prefixes that redirect
   */
  async addRedirect (name, port, urls) {
    const added = []
    for (const u of urls) {
      const p = parse(u)
      if (p.scheme !== 'https') continue
      const prefix = `http://${p.host}:${port}${p.path}`
      this.table.add(prefix, new Redirect(name, p.port))
      added.push({ prefix, port, ip: p.ip })
    }
    const acquired = []
    try {
      for (const a of added) {
        const use = this.listeners.acquire(port, false, a.prefix, a.ip)
        await use.ready // a failed bind gives its use back itself
        acquired.push(a)
      }
    } catch (err) {
      for (const a of added) this.table.remove(a.prefix)
      for (const a of acquired) this.listeners.release(a.port, a.ip)
      throw err
    }
    let list = this.redirects.get(name)
    if (list === undefined) this.redirects.set(name, (list = []))
    for (const a of added) list.push(a)
    return added.map((a) => a.prefix)
  }

  /**
   * Stops listening, answers in-flight requests (bounded by closeTimeout), closes worker
   * connections and removes the socket file.
   */
  close () {
    if (this.closePromise === null) this.closePromise = this.shutdown()
    return this.closePromise
  }

  // -------------------------------------------------------------------------
  // internals

  async registerUrls (q, urls) {
    const staged = this.stageUrls(q, urls)
    await staged.ready
    staged.commit()
  }

  /**
   * Routes q's new prefixes and binds their ports, synchronously where node would
   * (a port on every address; listeners.js): conflicts throw at once and bind nothing.
   * @returns {{bound: boolean, urls: string[], ports: number[], ready: Promise<void>,
   *   commit: () => void}} bound: every port listens now (urls and ports are final);
   *   ready settles once all do (on failure everything staged is undone); commit()
   *   adds the prefixes to q (call it once ready resolved, or at once when bound)
   */
  stageUrls (q, urls) {
    const list = Array.isArray(urls) ? urls : urls ? [urls] : []
    const parsed = []
    for (const u of list) {
      const p = parse(u, { allowPortZero: true })
      if (p.port !== 0 && (q.urls.includes(p.prefix) || parsed.some((x) => x.prefix === p.prefix))) continue
      parsed.push(p)
    }
    const routed = []
    const acquired = [] // [port, ip]
    const resolved = new Array(parsed.length)
    const waits = []
    let bound = true
    const undo = () => {
      for (const prefix of routed) this.table.remove(prefix)
      for (const [port, ip] of acquired) this.listeners.release(port, ip)
      routed.length = 0
      acquired.length = 0
    }
    try {
      // Conflicts first: a conflicting prefix must not bind anything.
      for (let i = 0; i < parsed.length; i++) {
        const p = parsed[i]
        if (p.port === 0) continue
        this.table.add(p.prefix, q)
        routed.push(p.prefix)
        resolved[i] = { prefix: p.prefix, port: p.port, ip: p.ip }
      }
      for (let i = 0; i < parsed.length; i++) {
        const p = parsed[i]
        if (p.port === 0) continue
        const use = this.listeners.acquire(p.port, p.scheme === 'https', p.prefix, p.ip)
        acquired.push([p.port, p.ip])
        // a failed bind gives its use back itself (listeners.js): not ours to release
        waits.push(use.ready.catch((err) => {
          const k = acquired.findIndex(([port, ip]) => port === p.port && ip === p.ip)
          if (k !== -1) acquired.splice(k, 1)
          throw err
        }))
        if (!use.bound) bound = false
      }
      for (let i = 0; i < parsed.length; i++) {
        const p = parsed[i]
        if (p.port !== 0) continue
        const free = this.listeners.acquireFree(p.scheme === 'https', p.ip)
        const place = (port) => {
          acquired.push([port, p.ip])
          if (p.scheme === 'https') this.refreshTls(port)
          const prefix = `${p.scheme}://${p.host}:${port}${p.path}`
          this.table.add(prefix, q)
          routed.push(prefix)
          resolved[i] = { prefix, port, ip: p.ip }
        }
        if (free.bound) {
          place(free.port)
        } else {
          bound = false
          waits.push(free.ready.then(place))
        }
      }
    } catch (err) {
      undo()
      throw err
    }
    const ready = Promise.all(waits).then(() => {}, (err) => {
      undo()
      throw err
    })
    let committed = false
    const commit = () => {
      if (committed) return
      committed = true
      for (const r of resolved) q.addUrl(r.prefix, r.port, r.ip)
    }
    const known = resolved.filter(Boolean)
    return { bound, urls: known.map((r) => r.prefix), ports: [...new Set(known.map((r) => r.port))], ready, commit }
  }

  /**
   * A standalone app's listen(): creates its queue and binds its prefixes before
   * listen() returns, as node binds its port (src/preload/standalone-hub.js). The first
   * worker presenting `token` owns the queue (it goes when that worker's connection
   * does); requests that arrive before it attaches wait in the queue.
   * @returns {{bound: boolean, urls: string[], ports: number[], ready: Promise<void>}}
   * @throws ERR_HTTPSYS_QUEUE_EXISTS, ERR_HTTPSYS_BAD_PREFIX, ERR_HTTPSYS_URL_CONFLICT
   */
  reserveQueue (name, { urls = [], path, token, settings = null, tls = null }) {
    if (this.queuesByName.has(name)) throw new codes.ERR_HTTPSYS_QUEUE_EXISTS({ queue: name })
    const q = new RequestQueue(name, {
      queueLength: this.queueLength,
      queueTimeout: this.queueTimeout,
      maxBodySize: this.maxBodySize,
      owner: null
    })
    q.token = token
    q.outputCache = this.cache
    q.reserved = true
    q.settings = settings
    this.queuesByName.set(name, q)
    if (path !== undefined) return this.reservePath(q, path)
    let staged
    try {
      staged = this.stageUrls(q, urls)
    } catch (err) {
      this.queuesByName.delete(name)
      throw err
    }
    const commit = () => {
      staged.commit()
      // its ports are its own: their connections follow the server's settings
      if (settings !== null) for (const port of q.urlPorts) this.portSettings.set(port, settings)
      // an https server's certificate serves from the moment its port is bound, as on
      // node (its worker's HELLO brings the same material again; a bad one fails there)
      if (tls !== null) {
        try {
          this.applyAppTls(q, tls)
        } catch {}
      }
    }
    if (staged.bound) commit()
    const ready = staged.ready.then(() => {
      commit()
      if (!q.bound) this.unbindQueue(name) // closed before its ports were bound
    }, (err) => {
      this.removeQueue(q)
      throw err
    })
    ready.catch(() => {})
    return { bound: staged.bound, urls: staged.urls, ports: staged.ports, ready }
  }

  /** reserveQueue for a listen(path): every request on the path goes to q, no routing. */
  reservePath (q, path) {
    let use
    try {
      use = this.listeners.acquirePath(path, (socket) => this.onPathSocket(socket, q))
    } catch (err) {
      this.queuesByName.delete(q.name)
      throw err
    }
    q.path = path
    const ready = use.ready.then(() => {
      if (!q.bound) this.unbindQueue(q.name)
    }, (err) => {
      this.removeQueue(q)
      throw err
    })
    ready.catch(() => {})
    return { bound: use.bound, urls: [], ports: [], ready }
  }

  /** A connection on a standalone server's socket path: its requests all go to that queue. */
  onPathSocket (socket, q) {
    if (this.closing) {
      socket.destroy()
      return
    }
    this.connSeq = (this.connSeq + 1) >>> 0
    const conn = new ClientConnection(this, socket, this.connSeq, 0, null, q.settings)
    conn.fixedQueue = q
    this.addConnection(conn)
  }

  /**
   * A stream the app handed its server (server.emit('connection', socket), node's way
   * to serve a socket it accepted itself, or any duplex): a client connection of the
   * server's queue `name` (a reserveQueue without prefixes), parsed and served with
   * the server's settings as those of a port it owns.
   * @returns {boolean} false when the queue is gone (the stream is destroyed)
   */
  adoptSocket (socket, name) {
    const q = this.queuesByName.get(name)
    if (q === undefined || q.deleted || this.closing) {
      socket.destroy()
      return false
    }
    this.onPathSocket(socket, q)
    return true
  }

  /**
   * A standalone app's server.close(): its prefixes stop routing and its ports are
   * released now, as node's close() frees the port at once; idle connections on a
   * released port are closed. The queue stays until its worker leaves, so the
   * requests in flight are still answered.
   */
  unbindQueue (name) {
    const q = this.queuesByName.get(name)
    if (q === undefined || !q.bound) return
    q.bound = false
    this.unroute(q)
  }

  /** server.ref()/unref() of a standalone app: whether q's ports keep the process alive. */
  setQueueRef (name, refed) {
    const q = this.queuesByName.get(name)
    if (q === undefined || q.refed === refed) return
    q.refed = refed
    if (!q.bound) return
    for (const port of q.urlPorts) this.listeners.setRef(port, refed)
  }

  /** q's prefixes (and its redirects) leave the routing table and their ports. */
  unroute (q) {
    // a standalone server's connections keep going to it after close(), as node's do
    // (their pipelined and keep-alive requests still reach it until they end)
    if (q.reserved && !q.deleted) {
      for (const c of this.conns) {
        if ((c.fixedQueue === null || c.fixedQueue === undefined) && q.urlPorts.includes(c.localPort)) c.fixedQueue = q
      }
    }
    if (q.path !== null && q.path !== undefined) {
      this.listeners.releasePath(q.path)
      for (const c of this.conns) if (c.fixedQueue === q) c.closeWhenIdle(true)
    }
    const urls = q.urls.splice(0)
    const ports = q.urlPorts.splice(0)
    const ips = q.urlIps.splice(0)
    for (let i = 0; i < urls.length; i++) {
      if (q.settings && this.portSettings.get(ports[i]) === q.settings) this.portSettings.delete(ports[i])
      this.table.remove(urls[i])
      if (!q.refed) this.listeners.setRef(ports[i], true)
      this.listeners.release(ports[i], ips[i])
    }
    this.removeRedirects(q.name)
  }

  /**
   * The last listener of a port closed: its idle connections are closed now and busy
   * ones after their responses (node's server.close() closes idle connections too).
   * Connections on a port still listening elsewhere are not touched, nor those of a
   * port a standalone server owned: as node's, they go on carrying requests to it until
   * they end (the client, the server's keepAliveTimeout, closeAllConnections()); its
   * close() already ended the idle ones (closeIdleConnections).
   */
  portClosed (port) {
    for (const c of this.conns) {
      if (c.localPort !== port || typeof c.closeWhenIdle !== 'function' || c.ownsPort === true) continue
      // a standalone server's: it ends once idle, reading on until then (node)
      const own = c.fixedQueue !== null && c.fixedQueue !== undefined && c.fixedQueue.reserved
      c.closeWhenIdle(own)
    }
  }

  removeQueue (q) {
    if (q.deleted) return
    q.deleted = true
    if (this.queuesByName.get(q.name) === q) this.queuesByName.delete(q.name)
    if (q.bound) {
      q.bound = false
      this.unroute(q)
    }
    this.tlsStore.removeApp(q.name)
    this.invalidateCache(q)
    for (const req of q.takeWaiting()) req.respondLocal(503, 'noQueue', false)
    for (const w of q.attachments.slice()) w.closeByHub('queue deleted')
    this.log.debug({ queue: q.name }, 'queue deleted')
  }

  /**
   * Called by a client connection for each request head.
   * @param {string} [path] what to route on, where the app gets the target as sent
   */
  route (conn, req, path = req.head.url) {
    const head = req.head
    const a = this.routeArgs
    a.scheme = conn.secure ? 'https' : 'http'
    a.port = conn.localPort
    a.host = head.host
    a.localAddress = conn.localAddress
    a.path = path
    const fixed = conn.fixedQueue
    const r = fixed === null || fixed === undefined ? this.table.route(a) : null
    const q = r === null ? (fixed.deleted ? undefined : fixed) : r.target
    if (q === undefined) {
      if (r === null) {
        req.respondLocal(503, 'noQueue', true)
        return
      }
      const variant = r.status !== 400 ? null : isInvalidUrl(head.url) ? 'url' : 'hostname'
      req.respondLocal(r.status, variant, false)
      return
    }
    // RFC 9110 15.5.20: a Host (or :authority, or absolute-form host) whose certificate
    // entry is not the one the handshake used (SNI) would pass the client-certificate
    // policy of another app, so it is answered 421 and the client reconnects for it
    if (conn.tlsSlot !== null && head.host !== conn.tlsHost) {
      if (this.tlsStore.misdirected(conn.localPort, conn.tlsSlot, hostnameOf(head.host))) {
        req.respondLocal(421, null, true)
        return
      }
      conn.tlsHost = head.host
    }
    if (q.redirect !== null) {
      req.respondLocal(308, null, false, q.redirect.location(head, conn.localAddress))
      return
    }
    if (this.closing || q.deleted) {
      req.respondLocal(503, 'noQueue', true)
      return
    }
    req.queue = q
    if (head.contentLength > q.maxBodySize) {
      conn.bodyTooLarge(req)
      return
    }
    // (an upgrade request is the app's to answer 101: never a stored page)
    if (q.outputCache !== null && (head.method === 'GET' || head.method === 'HEAD') && !head.upgrade) {
      // answered from memory before the queue: a hit never waits for a worker
      if (q.outputCache.answer(q, req)) return
    }
    // an app that cannot come back without a command (errored): no waiting for it
    if (q.unavailable && q.attachments.length === 0) {
      req.respondLocal(503, 'appDown', false)
      return
    }
    if (!q.enqueue(req)) req.respondLocal(503, 'queueFull', false)
  }

  /**
   * The supervisor says whether the app behind a queue can serve again by itself. While
   * it cannot (errored, exited for good, or stopped by command), its requests get 503 at once instead
   * of waiting for the queue timeout; an attaching worker makes it available again.
   */
  setQueueAvailable (name, available) {
    const q = this.queuesByName.get(name)
    if (q === undefined) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: name })
    q.unavailable = !available
    if (q.unavailable && q.attachments.length === 0) {
      for (const req of q.takeWaiting()) req.respondLocal(503, 'appDown', false)
    }
  }

  onClientSocket (socket, port) {
    if (this.closing) {
      socket.destroy()
      return
    }
    this.connSeq = (this.connSeq + 1) >>> 0
    this.addConnection(new ClientConnection(this, socket, this.connSeq, port))
  }

  addConnection (conn) {
    this.conns.add(conn)
    this.connsById.set(conn.id, conn)
    // a standalone server hears of its connections when they are accepted, as node's
    // 'connection' (its settings carry the hook; the server is in this process)
    const st = conn.settings
    if (st !== this && st !== null && st !== undefined && typeof st.onConnection === 'function') {
      try {
        st.onConnection(conn)
      } catch (err) {
        process.nextTick(() => { throw err })
      }
    }
  }

  /** A TLS port's connection, its handshake done: HTTP/1.1 or h2 by what ALPN chose. */
  onSecureSocket (socket, port, verdict) {
    if (this.closing) {
      socket.destroy()
      return
    }
    this.tlsCounts.handshakes++
    this.connSeq = (this.connSeq + 1) >>> 0
    const tls = encodeTlsInfo(tlsInfoOf(socket, verdict))
    let conn
    if (socket.alpnProtocol === 'h2') {
      conn = new H2Connection(this, socket, this.connSeq, port, tls)
    } else {
      // HTTP/1.1 keeps its side open after the client's FIN, as on plain ports (the
      // TLS server ends sockets on FIN until here: tls-server.js)
      socket.allowHalfOpen = true
      conn = new ClientConnection(this, socket, this.connSeq, port, tls)
    }
    conn.tlsSlot = verdict.slot
    this.addConnection(conn)
  }

  /**
   * A handshake failed (or a client certificate was refused): no app ever hears of it.
   * Counted by reason, and a debug record only: clients control this, and a record per
   * failure would be a lever (the supervisor logs the counts, hub-router.js).
   */
  tlsFailed (port, err, socket) {
    const c = this.tlsCounts
    c.failures++
    const reason = String((err && (err.reason || err.code)) || 'unknown')
    c.byReason[reason] = (c.byReason[reason] || 0) + 1
    this.log.debug({ port, code: err && err.code, reason, remoteAddress: socket && socket.remoteAddress }, 'TLS handshake failed')
    this.emit('tlsError', { port, code: (err && err.code) || null, reason })
  }

  /** The certificates of port changed: new handshakes use the new ones. */
  refreshTls (port) {
    if (!this.listeners.isSecure(port)) return
    for (const server of this.listeners.servers(port)) refresh(server, this.tlsStore, port)
  }

  /**
   * The https prefixes of q must each have a certificate: from the config, else from
   * the key material the attaching worker's https server was given (HELLO `tls`, never
   * logged), which then serves q's hosts. A standalone server that owns its port listens
   * without one, as node's does (a warning; every handshake fails).
   * @throws ERR_HTTPSYS_TLS_CERT, ERR_HTTPSYS_TLS_NO_CERT
   */
  applyAppTls (q, material) {
    const where = []
    for (const u of q.urls) {
      const p = parse(u)
      if (p.scheme === 'https') where.push({ port: p.port, host: p.hostKind === 'explicit' ? p.host : null, prefix: p.prefix })
    }
    if (where.length === 0) return
    // where the config's certificate serves every handshake, the app's is never used,
    // so it is not loaded either: an app that ships a certificate node would take but
    // the hub refuses (expired, or not matching its key) still runs behind the
    // operator's (README: "it wins over the app's")
    const own = where.filter((w) => !this.tlsStore.configServes(w.port, w.host))
    const options = own.length > 0 ? decodeTlsOptions(material) : null
    if (options !== null) this.tlsStore.setApp(q.name, own, options)
    for (const w of where) {
      if (this.tlsStore.has(w.port, w.host)) continue
      const err = new codes.ERR_HTTPSYS_TLS_NO_CERT({ prefix: w.prefix, port: w.port, host: w.host || undefined })
      // a standalone server that owns its port listens as node's does (every handshake
      // then fails); said once, where node says nothing
      if (q.settings !== null && q.settings !== undefined && q.settings.ownsPort === true) {
        this.log.warn({ code: err.code, port: w.port }, err.message)
        continue
      }
      throw err
    }
  }

  connectionClosed (conn) {
    this.conns.delete(conn)
    if (this.connsById.get(conn.id) === conn) this.connsById.delete(conn.id)
    const st = conn.settings
    if (st !== this && st !== null && st !== undefined && typeof st.onConnectionClose === 'function') st.onConnectionClose(conn.id)
    // the workers that had requests of it hear that it is gone (their req.socket's 'close')
    const seen = conn.seen
    if (seen !== null && seen !== undefined) {
      if (seen instanceof Set) {
        for (const a of seen) a.sendConnClosed(conn.id)
      } else {
        seen.sendConnClosed(conn.id)
      }
      conn.seen = null
    }
    if (this.conns.size === 0 && this.onConnsGone !== null) this.onConnsGone()
  }

  /**
   * A client connection on a port a standalone server owns sent its FIN with requests
   * unanswered: the workers that have requests of it hear so at once (CONN_FIN), as
   * node's server reads a FIN (client-connection.js armFinGrace).
   * @returns {number} how many workers were told (each answers CONN_FIN)
   */
  connectionFin (conn) {
    const seen = conn.seen
    if (seen === null || seen === undefined) return 0
    if (seen instanceof Set) {
      for (const a of seen) a.sendConnFin(conn.id)
      return seen.size
    }
    seen.sendConnFin(conn.id)
    return 1
  }

  sweep (now) {
    if (this.cache !== null && ++this.sweeps % 10 === 0) this.cache.purge()
    for (const c of this.conns) {
      if (c.deadline !== 0 && c.deadline <= now) c.timeout()
    }
    for (const q of this.queuesByName.values()) {
      if (q.waitingCount === 0) continue
      const expired = q.expire(now)
      if (expired.length === 0) continue
      this.log.debug({ queue: q.name, requests: expired.length }, 'requests waited longer than queueTimeout')
      for (const req of expired) req.respondLocal(503, 'queueTimeout', false)
    }
  }

  onWorkerSocket (socket) {
    if (this.closing) {
      socket.destroy()
      return
    }
    // (a worker in this process may come over an in-memory stream: adoptSocket)
    if (this.embedded && typeof socket.unref === 'function') socket.unref()
    const w = new AttachmentConnection(this, socket, ++this.attachmentSeq)
    this.attachments.add(w)
  }

  /**
   * A worker's HELLO: find (or, where workers may, create) its queue, then attach it.
   *
   * Admission, so a process that reaches the worker socket cannot take another app's
   * requests or URL space: a queue the supervisor made with a token admits only a
   * worker presenting it (the app's workers get it at spawn); a worker registers
   * prefixes only on a queue that has none (an app without `urls`: its first instance's
   * listen() decides, and later instances must ask for the same); and on a supervisor's
   * hub (workersMayCreate false) no worker creates a queue, named or anonymous.
   */
  async onHello (w, msg) {
    const name = typeof msg.queue === 'string' && msg.queue !== '' ? msg.queue : null
    const urls = Array.isArray(msg.urls) ? msg.urls.filter((u) => typeof u === 'string') : []
    const token = typeof msg.token === 'string' ? msg.token : ''
    w.pid = Number.isInteger(msg.pid) ? msg.pid : 0
    let q
    try {
      if (this.closing) throw new codes.ERR_HTTPSYS_QUEUE_CLOSED({ queue: name })
      if (name !== null) {
        q = this.queuesByName.get(name)
        if (q === undefined) {
          if (!this.workersMayCreate || urls.length === 0) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: name })
          await this.makeQueue(name, { urls, owner: w })
          q = this.queuesByName.get(name)
          q.claimed = claimKey(urls)
        } else {
          if (q.token !== null && !sameToken(q.token, token)) {
            throw new codes.ERR_HTTPSYS_ATTACH_DENIED({ queue: name, pid: w.pid, reason: 'it did not present the token its app\'s workers get at spawn' })
          }
          if (q.reserved) {
            // a standalone server's queue (reserveQueue): its listen() bound the
            // prefixes already, and its first worker owns it
            if (q.owner === null) q.owner = w
          } else if (q.urls.length === 0 && urls.length > 0) {
            await this.registerUrls(q, urls)
            q.claimed = claimKey(urls)
          } else if (urls.length > 0 && q.claimed !== null && q.claimed !== claimKey(urls) && claimKey(q.urls) !== claimKey(urls)) {
            throw new codes.ERR_HTTPSYS_ATTACH_DENIED({
              queue: name,
              pid: w.pid,
              reason: `its app is bound to ${q.urls.join(' ')} by its first instance, and this process asked for ${urls.join(' ')}`
            })
          } else if (urls.length > 0) {
            this.log.debug({ queue: name, urls, pid: w.pid }, 'queue has prefixes already; the worker\'s are ignored')
          }
        }
      } else {
        if (!this.workersMayCreate) {
          throw new codes.ERR_HTTPSYS_ATTACH_DENIED({ queue: '(none)', pid: w.pid, reason: 'this hub serves only the queues its supervisor made' })
        }
        if (urls.length === 0) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: '(none)' })
        const anon = `~${w.pid}.${++this.anonSeq}`
        await this.makeQueue(anon, { urls, owner: w })
        q = this.queuesByName.get(anon)
      }
      if (q !== undefined && !q.deleted) this.applyAppTls(q, msg.tls)
    } catch (err) {
      // a queue this worker made for itself goes with the refusal
      if (q !== undefined && q.owner === w) this.removeQueue(q)
      if (err.code === 'ERR_HTTPSYS_ATTACH_DENIED') this.log.warn({ queue: name, pid: w.pid, reason: err.reason }, `refused a worker (pid ${w.pid}) for queue ${name}: ${err.reason}`)
      if (!w.closed) {
        const details = {}
        for (const key of Object.keys(err)) if (key !== 'code') details[key] = err[key]
        w.sendJson(T.HELLO_ERR, { code: err.code || 'ERR_HTTPSYS_PROTOCOL', message: err.message, details })
        w.socket.end()
      }
      return
    }
    if (w.closed || q === undefined || q.deleted) {
      if (q !== undefined && q.owner === w) this.removeQueue(q)
      return
    }
    w.attach(q, msg.window)
    q.addWorker(w)
    this.invalidateCache(q) // a new instance may be a new build
    w.sendJson(T.HELLO_OK, { queue: q.name, urls: q.urls.slice(), ports: q.ports(), workerId: w.id }, true)
    this.log.debug({ queue: q.name, pid: w.pid, workerId: w.id }, 'worker attached')
    this.emit('attach', { queue: q.name, pid: w.pid, workerId: w.id })
    q.pump()
  }

  /**
   * A worker ends a client connection it had requests of (req.socket.end() or destroy()
   * with nothing in flight): idle, it closes now; busy, after what is in flight.
   * A connection the worker never saw is not its to end.
   */
  endConnection (w, id) {
    const conn = this.connsById.get(id)
    if (conn === undefined) return
    const seen = conn.seen
    if (seen !== w && !(seen instanceof Set && seen.has(w))) return
    conn.closeWhenIdle()
  }

  attachmentDetached (w, reason) {
    if (w.detachEmitted || !w.attached) return
    w.detachEmitted = true
    this.emit('detach', { queue: w.queue.name, pid: w.pid, workerId: w.id, reason })
  }

  /**
   * A worker's socket closed. Requests it never acknowledged go back to the front of
   * the queue (it never saw them: nothing is lost); requests it saw but did not answer
   * get 502, or lose their connection when the response had started.
   */
  attachmentClosed (w) {
    this.attachments.delete(w)
    const q = w.queue
    if (q !== null) {
      q.removeWorker(w)
      this.invalidateCache(q)
    }
    const reqs = w.inFlightRequests()
    let requeued = 0
    const gone = q === null || q.deleted || this.closing
    for (let i = reqs.length - 1; i >= 0; i--) {
      const r = reqs[i]
      const unseen = r.seq > w.acked
      if (unseen && !r.headSent && !gone) {
        r.resetForRequeue() // before release(): it keeps the body bytes to replay
        w.release(r)
        q.requeueFront(r)
        requeued++
        continue
      }
      w.release(r)
      r.attachment = null
      if (r.headSent) r.conn.destroy()
      else if (unseen) r.respondLocal(503, 'noQueue', false)
      else r.respondLocal(502, null, false)
    }
    if (reqs.length > 0) {
      this.log.warn({ queue: q && q.name, pid: w.pid, requeued, failed: reqs.length - requeued }, 'worker left with requests in flight')
    }
    if (w.attached) this.attachmentDetached(w, w.closeReason || 'disconnect')
    if (q === null) return
    if (q.owner === w) this.removeQueue(q)
    else q.pump()
  }

  async shutdown () {
    this.closing = true
    await this.listeners.closeAll()
    for (const q of this.queuesByName.values()) {
      for (const req of q.takeWaiting()) req.respondLocal(503, 'noQueue', true)
    }
    for (const c of [...this.conns]) c.shutdown()
    if (this.conns.size > 0) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, this.closeTimeout)
        this.onConnsGone = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.onConnsGone = null
      for (const c of [...this.conns]) c.destroy()
    }
    for (const q of [...this.queuesByName.values()]) this.removeQueue(q)
    const gone = [...this.attachments].map((w) => new Promise((resolve) => {
      if (w.closed) return resolve()
      w.socket.once('close', resolve)
      w.closeByHub('hub closing')
      setTimeout(() => w.destroy(), 1000).unref()
    }))
    await Promise.all(gone)
    if (this.server !== null) {
      await new Promise((resolve) => this.server.close(() => resolve()))
      this.server = null
      if (process.platform !== 'win32') {
        try {
          fs.unlinkSync(this.socketPath)
        } catch {}
      }
    }
    if (this.stopClock !== null) {
      this.stopClock()
      this.stopClock = null
    }
    this.tlsStore.close()
    this.log.debug('hub closed')
  }
}

/** What a worker asked to register, comparable across instances (port 0 stays 0). */
function claimKey (urls) {
  return urls.map((u) => {
    try {
      return parse(u, { allowPortZero: true }).prefix
    } catch {
      return u
    }
  }).sort().join(' ')
}

function sameToken (expected, given) {
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && crypto.timingSafeEqual(a, b)
}

/** @returns {number|null} the previous umask, or null where it cannot be set (Windows, worker threads) */
function setUmask (mask) {
  if (process.platform === 'win32') return null
  try {
    return process.umask(mask)
  } catch {
    return null
  }
}

module.exports = { Hub }
