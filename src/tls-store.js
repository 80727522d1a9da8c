'use strict'

// (The supervisor reads the config's certificates with it for the native router,
// src/supervisor/router-tls.js.)
//
// Which certificate the router serves on a TLS port: a SecureContext per port and SNI host
// name, from two sources, in this order (README "HTTPS and HTTP/2"):
//   1. the config's `tls` entries (by host, then the port's entry without a host),
//   2. the key material an app passed to https.createServer(), sent at attach, for the
//      hosts of its queue's https prefixes (an explicit host name, else the port).
// So an operator's certificate always wins over what an app ships, and two apps on one
// port with different hosts each get theirs by SNI (RFC 6066 3).
//
// Contexts are swapped, never mutated: a certificate file that changes (fs.watchFile,
// which follows the path across the rename a renewal usually does) or `httpsys reload`
// makes a new SecureContext for new handshakes; connections already up keep theirs.
//
// Sessions (RFC 8446 2.2) resume on the port that issued them, across a certificate
// swap, and never on another port: each port has its own ticket keys (OpenSSL encrypts
// and decrypts tickets with the keys of the server's own context, whichever SNI context
// served the handshake). Within a port a session resumes under any SNI name, and OpenSSL
// decides that before node picks the name's context, with the verify result of the
// handshake that made the session. So the client-certificate verdict is the hub's own,
// taken once the handshake is done (judge()): a resumed session is verified for an entry
// only if this hub verified its certificate for that entry's policy in a full handshake.

const crypto = require('node:crypto')
const fs = require('node:fs')
const tls = require('node:tls')
const { EventEmitter } = require('node:events')
const { LRUCache } = require('lru-cache')
const { loadMaterial, materialDigest } = require('./tls-material')

// node's default session lifetime (seconds), kept explicit: tickets outlive a swap.
const SESSION_TIMEOUT_S = 300
const WATCH_INTERVAL_MS = 2000
// Client certificates verified in a full handshake, by entry policy: what a resumed
// session may claim. A record lives as long as a session could (renewed on each
// resumption, which issues new tickets); the bound keeps a flood of distinct
// certificates from growing the hub (an evicted one makes its next resumption a refusal,
// and the client's next connection a full handshake).
const VERIFIED_MAX = 100000

/**
 * The entry a connection whose resumed TLS 1.2 session lost its server name may serve:
 * node reports none for it, so only the entries that ask no client certificate (and
 * those its certificate was verified for) are known to be right for it.
 */
const UNNAMED = Object.freeze({ key: 'unnamed', material: Object.freeze({ requestCert: false }) })

class TlsStore extends EventEmitter {
  /**
   * @param {object} opts
   * @param {object} opts.log pino logger
   * @param {boolean} [opts.watch=true] watch the config's certificate files
   */
  constructor ({ log, watch = true }) {
    super()
    this.log = log
    this.watchFiles = watch
    // per port: RFC 5077 4 ticket keys (16 name + 16 HMAC + 16 AES) and a session id
    // context, for the hub's life (a session resumes across a certificate swap)
    this.sessions = new Map() // port -> { ticketKeys, sessionIdContext }
    // made at the first verified certificate: lru-cache allocates arrays of its `max` up
    // front (some 4 MB), which a hub that never sees one (every standalone app's) would pay
    this.verified = null
    this.config = [] // { entry, port, host, slot }
    this.claims = new Map() // `${port} ${host|''}` -> [{ queue, slot }] (first claim serves)
    this.watched = new Map() // file -> listener
    this.reloadTimer = null
  }

  /**
   * The config's entries; every one is loaded and checked before any replaces what was there.
   * @param {object[]} entries { port, host?, cert?, key?, pfx?, passphrase?, ca?, requestCert?, rejectUnauthorized? }
   * @throws ERR_HTTPSYS_TLS_CERT naming the file
   */
  setConfig (entries) {
    const next = entries.map((entry) => {
      const host = entry.host ? entry.host.toLowerCase() : null
      return { entry, port: entry.port, host, slot: this.makeSlot(loadMaterial(entry, { port: entry.port, host }), configKey(entry.port, host)) }
    })
    this.config = next
    this.rewatch()
    for (const port of new Set(next.map((c) => c.port))) this.emit('change', port)
  }

  /**
   * An app's own certificate for the https prefixes of its queue. The first queue to claim
   * a host:port serves it; a later claim waits behind it (and is logged).
   * @param {string} queue
   * @param {{port: number, host: string|null}[]} where explicit hosts, or null for the port
   * @param {object} options decoded https options (protocol.decodeTlsOptions)
   * @throws ERR_HTTPSYS_TLS_CERT
   */
  setApp (queue, where, options) {
    const current = this.appSlotOf(queue)
    if (current !== null && current.material.digest === materialDigest(options, options)) return
    const first = where[0] || {}
    const slot = this.makeSlot(loadMaterial(options, { fromApp: true, port: first.port, host: first.host || undefined }), `app ${queue}`)
    this.removeApp(queue, true)
    const ports = new Set()
    for (const { port, host } of where) {
      const key = claimKey(port, host)
      let list = this.claims.get(key)
      if (list === undefined) this.claims.set(key, (list = []))
      list.push({ queue, slot })
      if (list.length > 1 && list[0].slot.material.fingerprint !== slot.material.fingerprint) {
        this.log.warn({ queue, port, host, servedBy: list[0].queue }, `the certificate queue ${queue} passed for ${host || '*'}:${port} is not used: queue ${list[0].queue} claimed it first`)
      }
      ports.add(port)
    }
    for (const port of ports) this.emit('change', port)
  }

  /** Forgets an app's certificates (its queue was deleted). */
  removeApp (queue, quiet = false) {
    const ports = new Set()
    for (const [key, list] of this.claims) {
      const i = list.findIndex((c) => c.queue === queue)
      if (i === -1) continue
      list.splice(i, 1)
      if (list.length === 0) this.claims.delete(key)
      ports.add(Number(key.split(' ')[0]))
    }
    if (!quiet) for (const port of ports) this.emit('change', port)
  }

  /**
   * Whether the config's entries serve every handshake for host (null: any host) on
   * port, so that no app's certificate would ever be chosen there (slotFor's order).
   */
  configServes (port, host) {
    return this.configSlotFor(port, sniNames(host)) !== null
  }

  /** Whether a handshake for host (or any host) on port has a certificate to use. */
  has (port, host) {
    return this.slotFor(port, host || null) !== null
  }

  /**
   * The slot whose certificate serves servername on port: config by host (exact, then a
   * *.wildcard), config for the port, app by host, app for the port.
   * @returns {{context: tls.SecureContext, material: object}|null}
   */
  slotFor (port, servername) {
    const names = sniNames(servername)
    const fromConfig = this.configSlotFor(port, names)
    if (fromConfig !== null) return fromConfig
    const { name, wild } = names
    if (name !== null) {
      const list = this.claims.get(claimKey(port, name)) || (wild !== null ? this.claims.get(claimKey(port, wild)) : undefined)
      if (list !== undefined) return list[0].slot
    }
    const list = this.claims.get(claimKey(port, null))
    return list !== undefined ? list[0].slot : null
  }

  /** The config's slot for names (sniNames) on port: by host (exact, then *.wildcard), then the port's. */
  configSlotFor (port, { name, wild }) {
    let byPort = null
    for (const c of this.config) {
      if (c.port !== port) continue
      if (c.host === null) byPort = byPort || c.slot
      else if (name !== null && (c.host === name || c.host === wild)) return c.slot
    }
    return byPort
  }

  /** The SNICallback's answer. */
  contextFor (port, servername) {
    const slot = this.slotFor(port, servername)
    return slot === null ? null : slot.context
  }

  /** What tls.Server.setSecureContext() gets for clients that send no SNI. */
  defaultOptions (port) {
    const slot = this.slotFor(port, null)
    return { ...(slot === null ? {} : slot.material.options), ...this.sessionOptions(port) }
  }

  /**
   * The hub's verdict on a connection whose handshake on port is done: the entry it
   * serves (a slot, or UNNAMED), and whether its client certificate is verified for
   * that entry. `refuse` when the entry requires a verified certificate and it is not.
   * @param {number} port
   * @param {import('node:tls').TLSSocket} socket
   * @returns {{slot: object|null, peer: import('node:crypto').X509Certificate|null,
   *   authorized: boolean, authorizationError: string|null, refuse: boolean}}
   */
  judge (port, socket) {
    const name = typeof socket.servername === 'string' ? socket.servername : null
    const reused = socket.isSessionReused()
    const peer = peerOf(socket)
    let slot
    if (reused && name === null && socket.getProtocol() !== 'TLSv1.3') {
      // TLS 1.2 binds the name to the session and node does not report it on resumption
      slot = peer === null ? UNNAMED : this.verifiedSlot(port, peer)
    } else {
      slot = this.slotFor(port, name)
    }
    const v = { slot, peer, authorized: false, authorizationError: null, refuse: false }
    if (slot === null || !slot.material.requestCert) return v
    if (peer === null) {
      v.authorizationError = reused ? 'NO_CERTIFICATE' : String(socket.authorizationError || 'NO_CERTIFICATE')
    } else if (!reused) {
      v.authorized = socket.authorized === true
      if (!v.authorized) v.authorizationError = String(socket.authorizationError || 'UNABLE_TO_VERIFY')
      else this.rememberVerified(port, slot, peer)
    } else {
      // the session's own verify result may be another entry's: only this hub's record counts
      v.authorized = socket.authorized === true && this.verified !== null && this.verified.get(verifiedKey(port, slot, peer)) !== undefined
      if (!v.authorized) v.authorizationError = 'SESSION_NOT_VERIFIED'
    }
    v.refuse = !v.authorized && slot.material.rejectUnauthorized
    return v
  }

  /**
   * Whether a request for host on a connection judged `slot` is misdirected (RFC 9110
   * 15.5.20): host's certificate entry is another than the one the handshake used, so
   * the client-certificate policy the request would pass is not the one its app has.
   * @param {number} port
   * @param {object|null} slot the connection's (judge)
   * @param {string} hostname the request's host name, lower case, no port
   */
  misdirected (port, slot, hostname) {
    // no host (HTTP/1.0): routed to a wildcard prefix, no entry is named
    if (!hostname) return false
    const target = this.slotFor(port, hostname)
    if (target === slot || target === null) return false
    if (slot === UNNAMED) {
      // an unnamed resumed session: any entry that asks no certificate
      return target.material.requestCert
    }
    return slot === null || target.key !== slot.key
  }

  /** Whether any certificate on port asks clients for theirs (requestCert is per connection, decided before SNI). */
  wantsClientCert (port) {
    for (const c of this.config) if (c.port === port && c.slot.material.requestCert) return true
    for (const [key, list] of this.claims) {
      if (Number(key.split(' ')[0]) === port && list[0].slot.material.requestCert) return true
    }
    return false
  }

  /**
   * Re-reads the config's certificate files (a change on disk, or `httpsys reload`). A
   * file that fails keeps its old certificate serving and is reported.
   * @returns {{label: string, changed: boolean, error?: Error}[]}
   */
  reload () {
    const out = []
    const ports = new Set()
    for (const c of this.config) {
      let material
      try {
        material = loadMaterial(c.entry, { port: c.port, host: c.host || undefined })
      } catch (err) {
        this.log.error({ event: 'tls-reload-failed', err, port: c.port, host: c.host, file: c.slot.material.label }, `TLS certificate not reloaded (the one loaded before keeps serving): ${err.message}`)
        out.push({ label: c.slot.material.label, changed: false, error: err })
        continue
      }
      const changed = material.digest !== c.slot.material.digest
      if (changed) {
        c.slot = this.makeSlot(material, c.slot.key)
        ports.add(c.port)
        this.log.info({ event: 'tls-reload', port: c.port, host: c.host, subject: material.subject, validTo: material.validTo },
          `TLS certificate for ${c.host || '*'}:${c.port} reloaded from ${material.label} (${material.subject}, valid to ${material.validTo})`)
      }
      out.push({ label: material.label, changed })
    }
    this.rewatch()
    for (const port of ports) this.emit('change', port)
    return out
  }

  close () {
    for (const [file, listener] of this.watched) fs.unwatchFile(file, listener)
    this.watched.clear()
    if (this.reloadTimer !== null) clearTimeout(this.reloadTimer)
    this.reloadTimer = null
  }

  // -------------------------------------------------------------------------

  /**
   * @param {object} material tls-material.js
   * @param {string} key the entry's identity, kept across a reload of its files
   */
  makeSlot (material, key) {
    const policy = material.requestCert ? caDigest(material.options.ca) : ''
    return { key, policy, material, context: tls.createSecureContext({ ...material.options, ...SNI_CONTEXT_OPTIONS }) }
  }

  rememberVerified (port, slot, peer) {
    if (this.verified === null) this.verified = new LRUCache({ max: VERIFIED_MAX, ttl: SESSION_TIMEOUT_S * 1000, updateAgeOnGet: true })
    this.verified.set(verifiedKey(port, slot, peer), true)
    this.verified.set(`${port} ${peer.fingerprint256}`, slot.key)
  }

  /** The entry a certificate was last verified for on port (a resumed TLS 1.2 session), as it is now; UNNAMED if none. */
  verifiedSlot (port, peer) {
    const key = this.verified === null ? undefined : this.verified.get(`${port} ${peer.fingerprint256}`)
    if (key === undefined) return UNNAMED
    for (const c of this.config) if (c.port === port && c.slot.key === key) return c.slot
    for (const [k, list] of this.claims) {
      if (Number(k.split(' ')[0]) === port && list[0].slot.key === key) return list[0].slot
    }
    return UNNAMED
  }

  /**
   * A port's server context: its session ticket keys and id context, and
   * no renegotiation (an SNI context has its own SNI_CONTEXT_OPTIONS). A TLS 1.2 client may ask for a new handshake on a live connection;
   * node's limit on those (3 in 10 minutes) only raises an 'error' on the socket, and
   * each costs the server a signature, so the hub refuses them all, as HTTP.SYS does by
   * default: the client's request fails the connection (no_renegotiation), no handshake
   * is made. TLS 1.3 has no renegotiation.
   */
  sessionOptions (port) {
    let s = this.sessions.get(port)
    if (s === undefined) {
      s = { ticketKeys: crypto.randomBytes(48), sessionIdContext: crypto.randomBytes(16).toString('hex') }
      this.sessions.set(port, s)
    }
    return { ...s, sessionTimeout: SESSION_TIMEOUT_S, secureOptions: crypto.constants.SSL_OP_NO_RENEGOTIATION }
  }

  appSlotOf (queue) {
    for (const list of this.claims.values()) for (const c of list) if (c.queue === queue) return c.slot
    return null
  }

  rewatch () {
    if (!this.watchFiles) return
    const files = new Set(this.config.flatMap((c) => c.slot.material.files))
    for (const [file, listener] of this.watched) {
      if (!files.has(file)) {
        fs.unwatchFile(file, listener)
        this.watched.delete(file)
      }
    }
    for (const file of files) {
      if (this.watched.has(file)) continue
      const listener = (cur, prev) => {
        if (cur.mtimeMs === prev.mtimeMs && cur.size === prev.size && cur.ino === prev.ino) return
        this.scheduleReload()
      }
      fs.watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, listener)
      this.watched.set(file, listener)
    }
  }

  // A renewal writes the certificate and the key one after the other: one reload
  // after the burst, not one with a new certificate and the old key.
  scheduleReload () {
    if (this.reloadTimer !== null) clearTimeout(this.reloadTimer)
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null
      this.reload()
    }, 500)
    this.reloadTimer.unref()
  }
}

// An SNI context: tickets are the port's (the server context's keys), renegotiation refused.
const SNI_CONTEXT_OPTIONS = { sessionTimeout: SESSION_TIMEOUT_S, secureOptions: crypto.constants.SSL_OP_NO_RENEGOTIATION }

/** The client certificate of a connection, or null. */
function peerOf (socket) {
  try {
    return socket.getPeerX509Certificate() || null
  } catch {
    return null
  }
}

// A verification record: the certificate verified for this entry's CA on this port. The
// key pairs with verifiedSlot's `${port} ${fingerprint}` record of the last entry.
function verifiedKey (port, slot, peer) {
  return `${port} ${peer.fingerprint256} ${slot.key} ${slot.policy}`
}

function caDigest (ca) {
  const h = crypto.createHash('sha256')
  for (const c of [].concat(ca || [])) h.update(String(c)).update('\0')
  return h.digest('hex')
}

function configKey (port, host) {
  return `config ${port} ${host || ''}`
}

/** A server name as the entries are keyed: lower case, and its *.wildcard (null for none). */
function sniNames (servername) {
  const name = servername ? String(servername).toLowerCase() : null
  const wild = name !== null && name.indexOf('.') > 0 ? '*' + name.slice(name.indexOf('.')) : null
  return { name, wild }
}

function claimKey (port, host) {
  return `${port} ${host || ''}`
}

module.exports = { TlsStore, SESSION_TIMEOUT_S, UNNAMED }
