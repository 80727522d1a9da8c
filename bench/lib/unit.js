'use strict'

// NGINX Unit as a peer column of the matrix (issue 25): a C router passing requests to
// node processes over shared memory, the closest peer to httpsys's design. Unit is not
// packaged here: bench/unit/build.sh builds 1.35.0 from its source into a machine-local
// prefix (bench/README.md), never into the repo. Without a build the column is skipped
// with a note.
//
// One unitd per measurement, with its state, control socket, log and pid file in a temp
// directory of its own; the app runs as Unit runs node apps: `node --require
// unit-http/loader app.js`, the loader handing the app unit-http in place of node's http
// (the app's listen() port is ignored: Unit's listener is the one configured here).

const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')

const DEFAULT_PREFIX = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'httpsys-bench', 'unit-1.35.0')

/**
 * Where Unit is built: { unitd, nodeModules }, or null. $UNIT_PREFIX names a prefix
 * bench/unit/build.sh installed into (UNIT_PREFIX=none runs without Unit), else its default.
 */
function findUnit (prefix = process.env.UNIT_PREFIX || DEFAULT_PREFIX) {
  if (prefix === 'none') return null
  const unitd = path.join(prefix, 'sbin', 'unitd')
  const nodeModules = path.join(prefix, 'node', 'node_modules')
  if (!fs.existsSync(unitd) || !fs.existsSync(path.join(nodeModules, 'unit-http', 'build', 'Release', 'unit-http.node'))) return null
  return { prefix, unitd, nodeModules }
}

/**
 * One call on Unit's control API (a unix socket); resolves with the parsed answer. body:
 * an object sent as JSON, or a Buffer sent as it is (a PEM bundle for /certificates).
 */
function control (socketPath, method, urlPath, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? null : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body))
    const req = http.request({ socketPath, method, path: urlPath, headers: data ? { 'Content-Length': data.length } : {} }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { text += d })
      res.on('end', () => {
        let parsed = text
        try { parsed = JSON.parse(text) } catch {}
        if (res.statusCode >= 400) return reject(new Error(`unit ${method} ${urlPath}: ${res.statusCode} ${text.trim()}`))
        resolve(parsed)
      })
    })
    req.on('error', reject)
    req.end(data)
  })
}

async function waitForSocket (file, child, deadline = Date.now() + 10000) {
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`unitd exited (${child.exitCode}) before its control socket appeared`)
    if (fs.existsSync(file)) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`unitd made no control socket at ${file}`)
}

/**
 * Unit's configuration for one app: a listener on 127.0.0.1:port passing to processes
 * node processes of the app. Bodies up to 8 MB (Unit's default too), so a 1 MB upload is
 * served as node serves it.
 */
function unitConfig ({ port, app, env, processes, nodeModules }) {
  return {
    listeners: { [`127.0.0.1:${port}`]: { pass: 'applications/app' } },
    applications: {
      app: {
        type: 'external',
        working_directory: path.dirname(app),
        executable: process.execPath,
        arguments: ['--require', 'unit-http/loader', app],
        processes,
        environment: { ...env, NODE_PATH: nodeModules }
      }
    },
    settings: { http: { max_body_size: 8388608 } }
  }
}

/**
 * The role of a process of Unit's tree, from its command line: 'router' (Unit's router
 * process, its threads included), 'supervisor' (main and controller), 'workers' (the
 * app's prototype, and the node processes it execs, whose command line is node's).
 */
function unitRole (cmd) {
  if (/^unit: router\b/.test(cmd)) return 'router'
  if (/^unit: (main|controller)\b/.test(cmd)) return 'supervisor'
  return 'workers'
}

module.exports = { findUnit, control, waitForSocket, unitConfig, unitRole, DEFAULT_PREFIX }
