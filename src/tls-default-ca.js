'use strict'

// node's default CA store as PEM text, for the native router (issue 25): an https
// server that asks for client certificates (requestCert) without a `ca` has node check
// them against its default roots, and the Go router has no bundle of its own to use, so
// it is sent one (`setDefaultCa` on the control channel, a standalone listen's
// `defaultCA`; router/internal/tlsstore/defaultca.go). The default is node's bundled
// roots (tls.rootCertificates) and the file NODE_EXTRA_CA_CERTS names, as node reads
// them at startup; tls.getCACertificates('default') says so itself where node has it.

const fs = require('node:fs')
const tls = require('node:tls')

let cached = null

/** @returns {string} PEM certificates, one after another */
function defaultCaPem () {
  if (cached !== null) return cached
  let certs
  if (typeof tls.getCACertificates === 'function') {
    certs = tls.getCACertificates('default')
  } else {
    certs = tls.rootCertificates.slice()
    const extra = process.env.NODE_EXTRA_CA_CERTS
    if (extra) {
      // node warns about a file it cannot read and goes on without it: so do we, quietly
      try {
        certs.push(fs.readFileSync(extra, 'utf8'))
      } catch {}
    }
  }
  cached = certs.join('\n')
  return cached
}

module.exports = { defaultCaPem }
