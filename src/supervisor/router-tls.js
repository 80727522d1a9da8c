'use strict'

// The config's certificates for the native router (issue 25; router/internal/tlsstore):
// read, decrypted and checked here by the hub's own TlsStore (src/tls-store.js,
// src/tls-material.js), so a bad file is named with the same message as on the hub and
// the files are watched the same way; the router gets PEM text (a .pfx as it is, with
// its passphrase: node cannot export its key) over its control channel
// (`setTls`, docs/router-control.md) and chooses among them by port and SNI host. A
// reload, or a watched file that changed, sends them all again; the router keeps each
// entry's identity (port and host), so sessions and verified client certificates
// survive the swap as on the hub.

const crypto = require('node:crypto')
const { TlsStore } = require('../tls-store')

class RouterTls {
  /**
   * @param {object} opts
   * @param {object} opts.log pino logger
   * @param {boolean} [opts.watch=true] watch the certificate files
   * @param {(entries: object[]) => Promise<void>} opts.send the router's setTls
   */
  constructor ({ log, watch = true, send }) {
    this.log = log
    this.send = send
    this.store = new TlsStore({ log, watch })
    // a watched file changed (one event per port): one send for the burst
    this.pending = false
    this.started = false // until the first push: the router has nothing to update
    this.store.on('change', () => {
      if (this.pending || !this.started) return
      this.pending = true
      process.nextTick(() => {
        this.pending = false
        this.push().catch((err) => this.log.error({ err }, `the router did not take the reloaded certificates: ${err.message}`))
      })
    })
  }

  /**
   * Loads and checks the config's entries (router-config.js configTls's output).
   * @throws ERR_HTTPSYS_TLS_CERT naming the file
   */
  set (entries) {
    this.store.setConfig(entries)
    return this.entries()
  }

  /** Whether any entry is configured. */
  get size () {
    return this.store.config.length
  }

  /** Re-reads the files (`httpsys reload`): the store's result; the router gets the new ones. */
  reload () {
    return this.store.reload()
  }

  /** Sends the entries as they are now. */
  push () {
    this.started = true
    return this.send(this.entries())
  }

  /** The entries as the router's setTls takes them (PEM text, the key decrypted; a pfx as it is, base64). */
  entries () {
    return this.store.config.map(routerEntry)
  }

  close () {
    this.store.close()
  }
}

function routerEntry ({ port, host, slot }) {
  const m = slot.material
  const o = m.options
  const out = {
    port,
    host: host || '',
    cert: '',
    key: '',
    ca: o.ca === undefined ? '' : pemOf(o.ca),
    requestCert: m.requestCert,
    rejectUnauthorized: m.rejectUnauthorized,
    label: m.label
  }
  if (o.cert !== undefined) {
    out.cert = pemOf(o.cert)
    const key = crypto.createPrivateKey({ key: pemOf(o.key), passphrase: o.passphrase })
    out.key = key.export({ type: 'pkcs8', format: 'pem' })
  }
  if (o.pfx !== undefined) {
    // node cannot export a PKCS#12 file's key: the router opens it (tlsstore/pfx.go),
    // which node has done here already, so it opens
    out.pfx = [].concat(o.pfx).map((b) => Buffer.from(b).toString('base64'))
    out.passphrase = o.passphrase === undefined ? '' : String(o.passphrase)
  }
  return out
}

function pemOf (v) {
  return [].concat(v).map((x) => Buffer.isBuffer(x) ? x.toString('utf8') : String(x)).join('\n')
}

module.exports = { RouterTls }
