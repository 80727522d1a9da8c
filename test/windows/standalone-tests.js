'use strict'

// A standalone app on the native router in Windows node.exe under Wine (issue 25;
// src/preload/standalone-native-win.js): node cannot hand the router a socket there, so
// the router binds while listen() waits on a worker thread. HTTPSYS_BACKEND=hub keeps
// HTTP.SYS out (the standalone router serves where HTTP.SYS does not); the Go router is
// the default there (the first test), HTTPSYS_ROUTER=native asks for it (the second).
// Registered by run-tests.js.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const W = require('./lib/wine')

const FIX = 'test/windows/fixtures'

/** The cross-built Windows router (run.sh: HTTPSYS_WINE_ROUTER), or null. */
function routerExe () {
  const file = process.env.HTTPSYS_WINE_ROUTER
  return file && fs.existsSync(file) ? file : null
}

/**
 * @param {Function} test registers a test (name, fn, { keep })
 * @param {object} ctx { start, json } from run-tests.js
 */
function register (test, { start, json }) {
  test('standalone (native router, the default: no HTTPSYS_ROUTER): listen(0) knows its port when it returns and serves, a port in use fails at once, and the app exits by itself after close(), its router with it', async () => {
    if (!routerExe()) W.skip('no Windows router: run.sh builds it with Go (HTTPSYS_WINE_ROUTER)')
    const env = {
      HTTPSYS_BACKEND: 'hub',
      HTTPSYS_ROUTER_PATH: `Z:${path.resolve(routerExe()).replace(/\//g, '\\')}`
    }
    const proc = start('standalone-native', ['--require', './src/register.js', `${FIX}/standalone-app.js`], { env })
    const said = JSON.parse((await W.waitFor(proc, /^\{"pid".*$/m, 30000))[0])
    console.log(`    listen() under Wine: first ${said.first.ms.toFixed(1)} ms (starts the router), next ${said.second.ms.toFixed(1)} ms, port in use ${said.taken.ms.toFixed(1)} ms`)
    assert.equal(typeof said.first.address.port, 'number', JSON.stringify(said))
    assert.notEqual(said.first.address.port, 0)
    assert.deepEqual(said.second.address, { address: '127.0.0.1', family: 'IPv4', port: said.second.address.port })
    assert.equal(said.taken.code, 'EADDRINUSE', said.taken.message)
    const routers = W.processesMatching('httpsys-router.exe')
    assert.equal(routers.length, 1, `one router for the app: ${JSON.stringify(routers)}`)
    assert.deepEqual(json(await W.request(said.first.address.port, { path: '/standalone' })), { pid: said.pid, url: '/standalone' })
    assert.equal((await W.request(said.second.address.port, { path: '/x' })).body.toString(), 'other')
    assert.equal(await W.stop(proc, 15000), true, `the app did not exit after close():\n${W.tail(proc.output())}`)
    await W.eventually(async () => assert.deepEqual(W.processesMatching('httpsys-router.exe'), []), 10000)
  })

  test('standalone (native router): an https server, listen(named pipe) and the same pipe again (EADDRINUSE), two listen(prefix) servers sharing a port, a stream handed to a server: all served by the router, src/hub never loaded, and the app exits by itself', async () => {
    if (!routerExe()) W.skip('no Windows router: run.sh builds it with Go (HTTPSYS_WINE_ROUTER)')
    const { makeCerts } = require('../helpers/tls-certs')
    const certs = makeCerts()
    try {
      const env = {
        HTTPSYS_BACKEND: 'hub',
        HTTPSYS_ROUTER: 'native',
        HTTPSYS_ROUTER_PATH: `Z:${path.resolve(routerExe()).replace(/\//g, '\\')}`,
        HTTPSYS_T_KEY: fs.readFileSync(certs.localhost.key).toString('base64'),
        HTTPSYS_T_CERT: fs.readFileSync(certs.localhost.cert).toString('base64')
      }
      const proc = start('standalone-kinds', ['--require', './src/register.js', `${FIX}/standalone-kinds-app.js`], { env })
      const said = JSON.parse((await W.waitFor(proc, /^\{"(https|error)".*$/m, 60000))[0])
      assert.equal(said.error, undefined, said.error)
      assert.equal(said.https, '200 tls /s')
      assert.equal(said.pipeAddress, true)
      assert.equal(said.pipe, '200 pipe /p')
      assert.equal(said.pipeTaken, 'EADDRINUSE')
      assert.deepEqual(said.prefixes.map((t) => t.slice(0, 12)), ['200 a /a/x', '200 b /b/y', '404 <!DOCTYP'])
      assert.equal(said.handed, '200 via /duplex')
      assert.equal(said.hubLoaded, false)
      assert.equal(await W.stop(proc, 15000), true, `the app did not exit after close():\n${W.tail(proc.output())}`)
      await W.eventually(async () => assert.deepEqual(W.processesMatching('httpsys-router.exe'), []), 10000)
    } finally {
      certs.cleanup()
    }
  })
}

module.exports = { register }
