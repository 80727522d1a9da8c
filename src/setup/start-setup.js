'use strict'

// `httpsys start --setup` on Windows: before anything starts, the URL reservations the
// config's prefixes need (for the account httpsys runs as) and the certificate bindings
// its `tls` entries give. Elevated, it makes them; not elevated, it lists the exact
// commands to run once from an elevated prompt and nothing starts. The certificate an
// https app passes to https.createServer() is bound later, by its worker when it
// attaches (src/httpsys/app-cert.js, under ENV.SETUP).
//
// A tls entry's cert and key are files or PEM text, and each step imports them the same
// way (src/setup/cert.js). A printed command never holds key material or a passphrase: an
// entry with PEM text has no file to name, so its command is `httpsys start --setup`
// itself, which reads the config.

const { currentUser } = require('../httpsys/service-config')
const { createUrlAcl, needsReservation, reservedFor } = require('./urlacl')
const { createCert, isText } = require('./cert')

/**
 * What the config still needs on this machine.
 * @param {object} config a validated config
 * @param {object} sc the service configuration (src/httpsys/service-config.js)
 * @param {object} [options]
 * @param {string} [options.user] the account the reservations are for (default: current)
 * @returns {{steps: {kind: string, what: string, command: string, run: Function}[], notes: string[]}}
 */
function planSetup (config, sc, { user = currentUser() } = {}) {
  const steps = []
  const notes = []
  const urlacl = createUrlAcl(sc)
  const cert = createCert(sc)
  const reservations = sc.urlAclList()
  let sid = null
  try {
    sid = user ? sc.lookupAccount(user).sid : null
  } catch {}
  const seen = new Set()
  for (const app of config.apps) {
    for (const prefix of app.urls) {
      if (seen.has(prefix) || !needsReservation(prefix)) continue
      seen.add(prefix)
      if (reservedFor(reservations, prefix, sid, 'interactive')) continue
      steps.push({
        kind: 'urlacl',
        what: `reserve ${prefix} for ${user || 'this account'}`,
        command: `httpsys urlacl add ${prefix}${user ? ` --user ${user}` : ''}`,
        run: () => urlacl.add(prefix, { user })
      })
    }
  }
  const bindings = cert.list()
  for (const entry of config.tls) {
    const key = entry.host !== undefined ? { port: entry.port, host: entry.host } : { port: entry.port, ip: entry.ip || '0.0.0.0' }
    const binding = entry.host !== undefined ? `${entry.host}:${entry.port}` : `${key.ip}:${entry.port}`
    const existing = bindings.find((b) => b.binding === binding)
    const asks = entry.requestCert === true
    const where = entry.host !== undefined ? ` --host ${entry.host}` : entry.ip ? ` --ip ${entry.ip}` : ''
    if (existing && (entry.thumbprint === undefined || existing.thumbprint === entry.thumbprint.replace(/[\s:]/g, '').toLowerCase())) {
      if (!asks || existing.clientCert) continue
      // the certificate is bound; HTTP.SYS must also ask clients for theirs
      steps.push({
        kind: 'cert',
        what: `have HTTP.SYS ask clients for a certificate on ${binding} (tls requestCert)`,
        command: `httpsys cert add --port ${entry.port}${where} --thumbprint ${existing.thumbprint} --client-cert`,
        run: () => cert.add({ ...key, thumbprint: existing.thumbprint, store: existing.store, clientCert: true })
      })
      continue
    }
    const from = `the config's tls entry for ${binding}`
    const inline = isText(entry.cert) || isText(entry.key)
    const passphrase = entry.passphrase ? ' --passphrase <the config\'s passphrase>' : ''
    const source = entry.thumbprint !== undefined
      ? ` --thumbprint ${entry.thumbprint}`
      : entry.pfx !== undefined ? ` --pfx "${entry.pfx}"${passphrase}` : ` --cert "${entry.cert}" --key "${entry.key}"${passphrase}`
    const configFile = config.source && config.source.configFile
    steps.push({
      kind: 'cert',
      what: `bind ${entry.thumbprint ? `the certificate ${entry.thumbprint}` : inline ? `the certificate of ${from} (PEM text)` : 'the certificate of ' + (entry.pfx || entry.cert)} to ${binding}`,
      command: inline
        ? `httpsys start${configFile ? ` -c "${configFile}"` : ''} --setup`
        : `httpsys cert add --port ${entry.port}${where}${source}${asks ? ' --client-cert' : ''}`,
      run: () => cert.add({ ...key, thumbprint: entry.thumbprint, pfx: entry.pfx, passphrase: entry.passphrase, cert: entry.cert, key: entry.key, from, store: entry.store, clientCert: asks })
    })
  }
  for (const app of config.apps) {
    for (const prefix of app.urls) {
      if (!prefix.startsWith('https://')) continue
      const port = Number(/:(\d+)\//.exec(prefix)[1])
      const given = config.tls.some((t) => t.port === port)
      if (!given && !bindings.some((b) => b.port === port)) {
        notes.push(`${prefix} (${app.name}) has no certificate binding and the config's tls gives none: add one to tls, or run \`httpsys cert add --port ${port} --pfx site.pfx\`; ` +
          'an app that passes its own key and certificate to https.createServer() has them bound when it starts')
      }
    }
  }
  return { steps, notes }
}

module.exports = { planSetup }
