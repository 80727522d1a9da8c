'use strict'

// Client certificates asked for without a `ca` (requestCert alone) are checked against
// node's default CAs, as node's own server checks them (its bundled roots and
// NODE_EXTRA_CA_CERTS): by the native router, which has no bundle of its own and is sent
// node's (`setDefaultCa`, src/tls-default-ca.js; issue 25), as the JS hub's OpenSSL
// context had them. Under `httpsys start`: an app's own
// https.createServer({ requestCert: true }) and a config `tls` entry with requestCert.
// The test's CA stands for a public one: it is the file NODE_EXTRA_CA_CERTS names.
// (The standalone half: router-standalone-tls.test.js.)

const fs = require('node:fs')
const https = require('node:https')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, writeConfig } = require('../fixtures/apps/harness')
const { makeCerts } = require('../helpers/tls-certs')
const { routerBin } = require('../helpers/native-router')

jest.setTimeout(60000)

const ROUTERS = [
  ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
]

// what the app's req.socket says of the client's certificate
const APP = `'use strict'
const fs = require('node:fs')
const https = require('node:https')
const own = process.env.KEY_FILE ? { key: fs.readFileSync(process.env.KEY_FILE), cert: fs.readFileSync(process.env.CERT_FILE), requestCert: true, rejectUnauthorized: false } : {}
https.createServer(own, (req, res) => {
  const peer = req.socket.getPeerCertificate()
  res.end(JSON.stringify({ authorized: req.socket.authorized, error: req.socket.authorizationError || null, cn: peer && peer.subject ? peer.subject.CN : null }))
}).listen(Number(process.env.APP_PORT))
`

let certs
let dir
beforeAll(() => {
  certs = makeCerts()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-default-ca-'))
  fs.writeFileSync(path.join(dir, 'app.js'), APP)
})
afterAll(() => {
  certs.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

function ask (port, client) {
  return new Promise((resolve, reject) => {
    const opts = { host: '127.0.0.1', port, rejectUnauthorized: false, agent: false }
    if (client) Object.assign(opts, { cert: certs.read(client.cert), key: certs.read(client.key) })
    https.get(opts, (res) => {
      let body = ''
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve(JSON.parse(body)))
    }).on('error', reject)
  })
}

test.each(ROUTERS)('%s: requestCert without a ca, from the app and from the config, checks a client certificate against node\'s default CAs', async (name, routerEnv) => {
  const [own, configured] = [await freePort(), await freePort()]
  const script = path.join(dir, 'app.js')
  const file = writeConfig(dir, {
    tls: [{ port: configured, cert: certs.localhost.cert, key: certs.localhost.key, requestCert: true, rejectUnauthorized: false }],
    apps: [
      { name: 'own', script, urls: [`https://+:${own}/`], env: { APP_PORT: String(own), KEY_FILE: certs.localhost.key, CERT_FILE: certs.localhost.cert } },
      { name: 'configured', script, urls: [`https://+:${configured}/`], env: { APP_PORT: String(configured) } }
    ]
  })
  const run = start(['-c', file], { env: { ...routerEnv(), NODE_EXTRA_CA_CERTS: certs.ca.cert } })
  try {
    await run.waitFor((r) => r.event === 'ready' && r.app === 'own')
    await run.waitFor((r) => r.event === 'ready' && r.app === 'configured')
    for (const port of [own, configured]) {
      expect(await ask(port, certs.client)).toEqual({ authorized: true, error: null, cn: 'test client' })
      expect(await ask(port, certs.stranger)).toEqual({ authorized: false, error: 'DEPTH_ZERO_SELF_SIGNED_CERT', cn: 'stranger' })
    }
  } finally {
    run.signal('SIGINT')
    await run.exited
    await run.cleanup()
  }
})
