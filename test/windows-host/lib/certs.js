'use strict'

// The certificates the TLS checks use, made fresh by the run (nothing is committed):
//
//   root CA -> intermediate CA -> leaf "localhost" (RSA 2048, serverAuth, DNS:localhost
//   and IP:127.0.0.1): server.pfx holds the leaf, its key and the intermediate (not the
//   root), as a CA hands out a chain; a client that trusts only the root verifies the
//   server only if HTTP.SYS sends the intermediate too (issue 24, defect 4).
//   client CA -> client "httpsys-host-client" (clientAuth): client.pfx; and a
//   self-signed "httpsys-host-stranger" no CA of the test vouches for: stranger.pfx.
//
// Keys come from node:crypto; node cannot sign a certificate, so the openssl CLI does
// (Git for Windows ships one, as do hosted runners; OPENSSL names another). Without
// openssl, PowerShell's New-SelfSignedCertificate makes the same chain in
// Cert:\CurrentUser\My, exports it and deletes it from the store again.
// PKCS#12 files use 3DES and a SHA-1 MAC: every Windows imports them (Server 2019 does
// not take OpenSSL 3's AES default) and so does node's OpenSSL without its legacy provider.

const { spawnSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const DAYS = 30

/** The openssl executable to use, or null. */
function findOpenssl (env = process.env) {
  const candidates = []
  if (env.OPENSSL) candidates.push(env.OPENSSL)
  if (process.platform === 'win32') {
    for (const base of [env.ProgramFiles, env['ProgramFiles(x86)'], env.ProgramW6432].filter(Boolean)) {
      // mingw64's is a native build; usr\bin's is MSYS2's (it rewrites arguments that
      // look like paths, which the config files below avoid anyway)
      candidates.push(path.join(base, 'Git', 'mingw64', 'bin', 'openssl.exe'))
      candidates.push(path.join(base, 'Git', 'usr', 'bin', 'openssl.exe'))
      candidates.push(path.join(base, 'OpenSSL-Win64', 'bin', 'openssl.exe'))
    }
    candidates.push('C:\\Strawberry\\c\\bin\\openssl.exe')
  }
  candidates.push('openssl')
  for (const file of candidates) {
    const r = spawnSync(file, ['version'], { encoding: 'utf8', windowsHide: true, env: noPathConversion(env) })
    if (r.status === 0 && /OpenSSL|LibreSSL/i.test(r.stdout)) return file
  }
  return null
}

function noPathConversion (env) {
  return { ...env, MSYS_NO_PATHCONV: '1', MSYS2_ARG_CONV_EXCL: '*' }
}

/**
 * Makes the chains in `dir`.
 * @param {string} dir an empty folder of the run's scratch space
 * @param {object} [options]
 * @param {string} [options.openssl] the openssl to use (default: findOpenssl())
 * @param {string} [options.passphrase] of the .pfx files (default: random)
 * @returns {{tool: string, passphrase: string, serverPfx: string, rootPem: string,
 *   intermediatePem: string, leafPem: string, clientCaPem: string, clientPfx: string,
 *   strangerPfx: string}} PEM text, and paths for the .pfx files
 */
function makeCertificates (dir, { openssl = findOpenssl(), passphrase = crypto.randomBytes(12).toString('hex') } = {}) {
  fs.mkdirSync(dir, { recursive: true })
  if (openssl) return withOpenssl(dir, openssl, passphrase)
  if (process.platform === 'win32') return withPowerShell(dir, passphrase)
  throw new Error('no openssl found: install it (or Git for Windows), or set OPENSSL to its path')
}

function withOpenssl (dir, openssl, passphrase) {
  const file = (name) => path.join(dir, name)
  const ssl = (args) => {
    const r = spawnSync(openssl, args, { cwd: dir, encoding: 'utf8', windowsHide: true, env: noPathConversion(process.env) })
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} exited ${r.status}: ${r.stderr || r.error}`)
    return r.stdout
  }
  const key = (name) => {
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
    fs.writeFileSync(file(`${name}.key`), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
  }
  // every name and extension in a config file: no -subj (MSYS2 would rewrite "/CN=...")
  const config = (name, cn, extensions) => {
    fs.writeFileSync(file(`${name}.cnf`), [
      '[req]', 'prompt = no', 'distinguished_name = dn', '[dn]', `CN = ${cn}`, '[v3]', ...extensions, ''
    ].join('\n'))
  }
  const selfSigned = (name, cn, extensions) => {
    key(name)
    config(name, cn, extensions)
    ssl(['req', '-x509', '-new', '-key', `${name}.key`, '-config', `${name}.cnf`, '-extensions', 'v3', '-days', String(DAYS), '-sha256', '-out', `${name}.crt`])
  }
  const signed = (name, cn, extensions, issuer) => {
    key(name)
    config(name, cn, extensions)
    ssl(['req', '-new', '-key', `${name}.key`, '-config', `${name}.cnf`, '-out', `${name}.csr`])
    ssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.crt`, '-CAkey', `${issuer}.key`,
      '-set_serial', `0x${crypto.randomBytes(8).toString('hex')}`, '-days', String(DAYS), '-sha256',
      '-extfile', `${name}.cnf`, '-extensions', 'v3', '-out', `${name}.crt`])
  }
  const pfx = (name, { chain } = {}) => {
    const args = ['pkcs12', '-export', '-inkey', `${name}.key`, '-in', `${name}.crt`, '-out', `${name}.pfx`,
      '-passout', 'env:HTTPSYS_HOST_PFX_PASS', '-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-3DES', '-macalg', 'sha1']
    if (chain) args.push('-certfile', `${chain}.crt`)
    const r = spawnSync(openssl, args, { cwd: dir, encoding: 'utf8', windowsHide: true, env: { ...noPathConversion(process.env), HTTPSYS_HOST_PFX_PASS: passphrase } })
    if (r.status !== 0) throw new Error(`openssl pkcs12 -export exited ${r.status}: ${r.stderr || r.error}`)
  }

  const ca = (pathlen) => ['basicConstraints = critical, CA:TRUE' + (pathlen === undefined ? '' : `, pathlen:${pathlen}`), 'keyUsage = critical, keyCertSign, cRLSign', 'subjectKeyIdentifier = hash']
  selfSigned('root', 'httpsys host test root', ca())
  signed('intermediate', 'httpsys host test intermediate', [...ca(0), 'authorityKeyIdentifier = keyid'], 'root')
  signed('leaf', 'localhost', ['basicConstraints = critical, CA:FALSE', 'keyUsage = critical, digitalSignature, keyEncipherment',
    'extendedKeyUsage = serverAuth', 'subjectAltName = DNS:localhost, IP:127.0.0.1', 'authorityKeyIdentifier = keyid'], 'intermediate')
  // the leaf's file holds the leaf only; the PFX adds the intermediate
  pfx('leaf', { chain: 'intermediate' })
  fs.renameSync(file('leaf.pfx'), file('server.pfx'))

  selfSigned('client-ca', 'httpsys host test client CA', ca(0))
  const client = ['basicConstraints = critical, CA:FALSE', 'keyUsage = critical, digitalSignature', 'extendedKeyUsage = clientAuth']
  signed('client', 'httpsys-host-client', [...client, 'authorityKeyIdentifier = keyid'], 'client-ca')
  pfx('client')
  selfSigned('stranger', 'httpsys-host-stranger', client)
  pfx('stranger')

  const read = (name) => fs.readFileSync(file(name), 'utf8')
  return {
    tool: `openssl (${openssl})`,
    passphrase,
    serverPfx: file('server.pfx'),
    rootPem: read('root.crt'),
    intermediatePem: read('intermediate.crt'),
    leafPem: read('leaf.crt'),
    clientCaPem: read('client-ca.crt'),
    clientPfx: file('client.pfx'),
    strangerPfx: file('stranger.pfx')
  }
}

// The same chain with PowerShell (Windows PowerShell 5.1's PKI module). The certificates
// live in Cert:\CurrentUser\My only while they are exported: the script deletes them in
// its finally block.
const POWERSHELL = [
  "$ErrorActionPreference = 'Stop'",
  '$dir = $env:HTTPSYS_HOST_CERT_DIR',
  '$pw = ConvertTo-SecureString -String $env:HTTPSYS_HOST_PFX_PASS -Force -AsPlainText',
  '$made = @()',
  'function New-Cert($params) {',
  `  $c = New-SelfSignedCertificate @params -CertStoreLocation Cert:\\CurrentUser\\My -KeyAlgorithm RSA -KeyLength 2048 -HashAlgorithm SHA256 -KeyExportPolicy Exportable -NotAfter (Get-Date).AddDays(${DAYS})`,
  '  $script:made += $c',
  '  return $c',
  '}',
  'function Save-Pem($cert, $name) {',
  "  $b64 = [Convert]::ToBase64String($cert.RawData, 'InsertLineBreaks')",
  "  $pem = '-----BEGIN CERTIFICATE-----', $b64, '-----END CERTIFICATE-----'",
  '  Set-Content -Path (Join-Path $dir $name) -Value $pem -Encoding ascii',
  '}',
  'try {',
  "  $ca = @{ KeyUsage = 'CertSign','CRLSign','DigitalSignature' }",
  "  $root = New-Cert ($ca + @{ Subject = 'CN=httpsys host test root'; TextExtension = @('2.5.29.19={critical}{text}ca=1&pathlength=1') })",
  "  $inter = New-Cert ($ca + @{ Subject = 'CN=httpsys host test intermediate'; Signer = $root; TextExtension = @('2.5.29.19={critical}{text}ca=1&pathlength=0') })",
  "  $leaf = New-Cert @{ Subject = 'CN=localhost'; Signer = $inter; KeyUsage = 'DigitalSignature','KeyEncipherment'; TextExtension = @('2.5.29.37={text}1.3.6.1.5.5.7.3.1', '2.5.29.17={text}DNS=localhost&IPAddress=127.0.0.1') }",
  "  $clientCa = New-Cert ($ca + @{ Subject = 'CN=httpsys host test client CA'; TextExtension = @('2.5.29.19={critical}{text}ca=1&pathlength=0') })",
  "  $client = New-Cert @{ Subject = 'CN=httpsys-host-client'; Signer = $clientCa; KeyUsage = 'DigitalSignature'; TextExtension = @('2.5.29.37={text}1.3.6.1.5.5.7.3.2') }",
  "  $stranger = New-Cert @{ Subject = 'CN=httpsys-host-stranger'; KeyUsage = 'DigitalSignature'; TextExtension = @('2.5.29.37={text}1.3.6.1.5.5.7.3.2') }",
  '  # the leaf with its key and the intermediate, not the root: the PFX a CA hands out',
  '  $chain = New-Object System.Security.Cryptography.X509Certificates.X509Certificate2Collection',
  '  [void]$chain.Add($leaf)',
  '  [void]$chain.Add((New-Object System.Security.Cryptography.X509Certificates.X509Certificate2 -ArgumentList @(,$inter.RawData)))',
  "  [IO.File]::WriteAllBytes((Join-Path $dir 'server.pfx'), $chain.Export('Pkcs12', $env:HTTPSYS_HOST_PFX_PASS))",
  "  Export-PfxCertificate -Cert $client -FilePath (Join-Path $dir 'client.pfx') -Password $pw -ChainOption EndEntityCertOnly | Out-Null",
  "  Export-PfxCertificate -Cert $stranger -FilePath (Join-Path $dir 'stranger.pfx') -Password $pw -ChainOption EndEntityCertOnly | Out-Null",
  "  Save-Pem $root 'root.crt'; Save-Pem $inter 'intermediate.crt'; Save-Pem $leaf 'leaf.crt'; Save-Pem $clientCa 'client-ca.crt'",
  '} finally {',
  "  foreach ($c in $made) { Remove-Item -Path ('Cert:\\CurrentUser\\My\\' + $c.Thumbprint) -DeleteKey -ErrorAction SilentlyContinue }",
  '}',
  ''
].join('\r\n')

function withPowerShell (dir, passphrase) {
  const script = path.join(dir, 'make-certificates.ps1')
  fs.writeFileSync(script, POWERSHELL)
  const r = spawnSync('powershell.exe', ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', script], {
    encoding: 'utf8', windowsHide: true, env: { ...process.env, HTTPSYS_HOST_CERT_DIR: dir, HTTPSYS_HOST_PFX_PASS: passphrase }
  })
  if (r.status !== 0) throw new Error(`PowerShell New-SelfSignedCertificate failed (${r.status}): ${r.stderr || r.stdout || r.error}`)
  const read = (name) => fs.readFileSync(path.join(dir, name), 'utf8')
  return {
    tool: 'PowerShell New-SelfSignedCertificate (no openssl found)',
    passphrase,
    serverPfx: path.join(dir, 'server.pfx'),
    rootPem: read('root.crt'),
    intermediatePem: read('intermediate.crt'),
    leafPem: read('leaf.crt'),
    clientCaPem: read('client-ca.crt'),
    clientPfx: path.join(dir, 'client.pfx'),
    strangerPfx: path.join(dir, 'stranger.pfx')
  }
}

/** The SHA-1 thumbprint of a PEM certificate, as Windows shows it (hex, upper case). */
function thumbprint (pem) {
  return new crypto.X509Certificate(pem).fingerprint.replace(/:/g, '').toUpperCase()
}

module.exports = { makeCertificates, findOpenssl, thumbprint }
