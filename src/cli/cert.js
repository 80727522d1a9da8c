'use strict'

// `httpsys cert add|delete|list`: TLS certificate bindings for HTTP.SYS (src/setup/cert.js).

const { setupDeps, notHere } = require('./setup-deps')
const { table } = require('./format')

function register (program, deps) {
  const d = setupDeps(deps)
  const cert = program.command('cert')
    .summary('bind TLS certificates to ports or host names (Windows, HTTP.SYS)')
    .description('Certificate bindings tell HTTP.SYS which certificate of LocalMachine\\My to serve on an IP:port, or on a ' +
      'host:port by SNI (what `netsh http add sslcert` does). Changes need an elevated prompt.')
  cert.command('add')
    .summary('bind a certificate (from the store, a .pfx, or PEM files)')
    .description('Bind a certificate to --port on every IPv4 address (0.0.0.0), on --ip, or on --host by SNI. ' +
      'A .pfx or PEM files are imported into LocalMachine\\My first (the key into a CNG key storage provider, the ' +
      'chain\'s intermediate CA certificates into LocalMachine\\CA). The certificate must have its private key and ' +
      'be valid today. Binding another certificate where one is bound replaces it and keeps the binding\'s other settings.')
    .requiredOption('--port <port>', 'the TCP port, e.g. 443')
    .option('--ip <address>', 'bind on this address only (default: 0.0.0.0, every IPv4 address; [::] for IPv6)')
    .option('--host <name>', 'bind for this host name (SNI) instead of an address')
    .option('--thumbprint <sha1>', 'a certificate already in the store (40 hex digits)')
    .option('--store <name>', 'the LocalMachine store (default: My)')
    .option('--pfx <file>', 'import this .pfx (PKCS#12) first')
    .option('--passphrase <text>', 'the passphrase of the .pfx or of an encrypted --key (default: $HTTPSYS_PFX_PASSPHRASE, else none)')
    .option('--cert <file>', 'import this PEM certificate first (with --key; the file may hold its chain after it)')
    .option('--key <file>', 'the PEM private key of --cert (PKCS#8, PKCS#1 or SEC1; encrypted with --passphrase)')
    .option('--client-cert', 'have HTTP.SYS ask clients for a certificate (for apps with requestCert; netsh\'s clientcertnegotiation=enable)')
    .option('--no-revocation-check', 'with --client-cert: do not check whether client certificates were revoked')
    .option('--json', 'print JSON (for scripts)')
    .action((options) => add(d, options))
  cert.command('delete')
    .alias('rm')
    .summary('delete a binding')
    .description('Delete the certificate binding of --port (with --ip or --host, that one); elevated. The certificate stays in the store.')
    .requiredOption('--port <port>', 'the TCP port')
    .option('--ip <address>', 'the address of the binding (default: 0.0.0.0)')
    .option('--host <name>', 'the host name of an SNI binding')
    .option('--json', 'print JSON (for scripts)')
    .action((options) => remove(d, options))
  cert.command('list')
    .alias('ls')
    .summary('list the bindings, their certificates, and what shadows what')
    .description('List the certificate bindings of this machine with their certificates (subject, expiry, private key), and which ' +
      'binding shadows which (an IP-specific one over 0.0.0.0, IPv4 without IPv6).')
    .option('--json', 'print JSON (for scripts)')
    .action((options) => list(d, options))
}

function library (d) {
  const { createCert } = require('../setup/cert')
  return createCert(d.serviceConfig())
}

function add (d, options) {
  if (!d.windows) return d.out(options.json ? JSON.stringify({ result: 'not-needed' }) + '\n' : notHere('A certificate binding'))
  const passphrase = options.passphrase !== undefined ? options.passphrase : process.env.HTTPSYS_PFX_PASSPHRASE
  const r = library(d).add({ ...pick(options), passphrase, clientCert: options.clientCert === true, revocationCheck: options.revocationCheck !== false })
  if (options.json) return d.out(JSON.stringify(r, null, 2) + '\n')
  const asks = r.clientCert ? ', asking clients for a certificate' : ''
  if (r.result === 'unchanged') d.out(`${r.binding} already serves ${r.thumbprint}${asks}: nothing changed\n`)
  else if (r.result === 'replaced') d.out(`${r.binding} now serves ${r.thumbprint}${asks}${r.replaced ? ` (replaced ${r.replaced})` : ''}\n`)
  else d.out(`${r.binding} now serves ${r.thumbprint}${asks}\n`)
  for (const i of r.intermediates || []) {
    d.out(`  intermediate CA ${i.subject} (${i.thumbprint}) ${i.added ? 'added to' : 'already in'} LocalMachine\\CA, sent with it to clients\n`)
  }
  for (const w of r.warnings || []) d.out(`  warning: ${w}\n`)
}

function remove (d, options) {
  if (!d.windows) return d.out(options.json ? JSON.stringify({ deleted: false }) + '\n' : notHere('A certificate binding'))
  const r = library(d).delete(pick(options))
  if (options.json) return d.out(JSON.stringify(r) + '\n')
  d.out(r.deleted ? `deleted the binding of ${r.binding}\n` : `${r.binding} has no binding: nothing to delete\n`)
}

function list (d, options) {
  if (!d.windows) return d.out(options.json ? '[]\n' : notHere('A certificate binding'))
  const records = library(d).list()
  if (options.json) return d.out(JSON.stringify(records, null, 2) + '\n')
  d.out(formatList(records))
}

function pick (o) {
  const out = {}
  for (const k of ['port', 'ip', 'host', 'thumbprint', 'store', 'pfx', 'cert', 'key']) if (o[k] !== undefined) out[k] = o[k]
  return out
}

/** The bindings as a table, then the notes on shadowing and broken certificates. */
function formatList (records) {
  if (records.length === 0) return 'no certificate bindings\n'
  const rows = [['binding', 'thumbprint', 'certificate', 'state', 'client cert', 'by']]
  const notes = []
  for (const r of records) {
    rows.push([
      r.binding,
      r.thumbprint,
      r.certificate ? r.certificate.subject : '-',
      r.problem ? 'BROKEN' : `ok until ${r.certificate ? r.certificate.notAfter.slice(0, 10) : '?'}`,
      r.clientCert ? (r.revocationCheck ? 'asked' : 'asked, no revocation check') : 'no',
      r.ours ? 'httpsys' : 'other'
    ])
    if (r.problem) notes.push(`${r.binding}: ${r.problem}`)
    if (r.keyUnreadable) notes.push(`${r.binding}: ${r.keyUnreadable}`)
    for (const note of r.notes) notes.push(`${r.binding}: ${note}`)
  }
  return table(rows) + '\n' + (notes.length ? '\n' + notes.map((n) => `  ${n}`).join('\n') + '\n' : '')
}

module.exports = { register, formatList }
