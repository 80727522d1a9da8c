'use strict'

// A standalone https server (node -r register, the process's own router) serves TLS
// from the moment listen() reports it listening, as node does: its certificate goes to
// the router with the port's bind, not later with the worker's attach. On either router
// (issue 25): the in-process JS hub (the default) and the native router the preload
// runs under HTTPSYS_ROUTER=native.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { makeCerts } = require('../helpers/tls-certs')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')

const ROUTERS = [
  ['the hub', () => ({ HTTPSYS_ROUTER: 'hub' })],
  ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
]

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

test.each(ROUTERS)('%s: a TLS handshake right after \'listening\' succeeds, and the request is answered', (name, routerEnv) => {
  const app = path.join(certs.dir, 'https-now.js')
  fs.writeFileSync(app, `
const fs = require('node:fs')
const https = require('node:https')
const server = https.createServer({ key: fs.readFileSync(${JSON.stringify(certs.localhost.key)}), cert: fs.readFileSync(${JSON.stringify(certs.localhost.cert)}) }, (req, res) => res.end('ok'))
server.listen(0, () => {
  // the handshake alone first (a bare TLS client), then a request on its own connection
  const tls = require('node:tls')
  const s = tls.connect({ port: server.address().port, host: '127.0.0.1', rejectUnauthorized: false })
  s.on('error', (err) => { console.log('handshake failed: ' + err.message); process.exit(1) })
  s.on('secureConnect', () => {
    s.destroy()
    https.get({ port: server.address().port, host: '127.0.0.1', rejectUnauthorized: false }, (res) => {
      let body = ''
      res.on('data', (c) => { body += c })
      res.on('end', () => { console.log(res.statusCode + ' ' + body); process.exit(0) })
    }).on('error', (err) => { console.log('failed: ' + err.message); process.exit(1) })
  })
})
`)
  const r = spawnSync(process.execPath, ['-r', REGISTER, app], { env: standaloneEnv(routerEnv()), encoding: 'utf8', timeout: 20000 })
  expect(r.stdout.trim()).toBe('200 ok')
  expect(r.status).toBe(0)
})
