'use strict'

// A certificate renewal under `httpsys start` (README "HTTPS and HTTP/2": "A certificate
// file that changes on disk is reloaded (checked first; a broken one keeps the old one
// serving and is logged) without dropping a connection, and `httpsys reload` reads the
// files again"), while HTTPS requests keep coming, some on keep-alive connections and
// some on a new connection each: not one fails, new handshakes get the new certificate
// (the hub polls the files: src/tls-store.js), connections already up keep theirs;
// `httpsys reload` takes a third one; a file replaced by garbage keeps the certificate
// that serves, and the supervisor's records name the file.

const crypto = require('node:crypto')
const fs = require('node:fs')
const https = require('node:https')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, writeConfig, waitUntil, sleep, APPS } = require('../fixtures/apps/harness')
const { selfSigned } = require('../helpers/tls-certs')

// Every PEM file is padded with newlines to this many bytes (PEM readers skip what follows
// the END line), so that one certificate can replace another without changing the file's
// size: see blindWrite().
const PEM_SIZE = 4096
// The live files' modification time, set explicitly (whole seconds, in the past).
const MTIME = Math.floor(Date.now() / 1000) - 3600

let dir
let run
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cert-reload-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A certificate for localhost (CN=<name>.localhost, its own serial): { name, cert, key (PEM text), fingerprint, subject }. */
function makeCert (name) {
  const certs = path.join(dir, 'certs')
  fs.mkdirSync(certs, { recursive: true })
  const files = selfSigned(certs, name, [`${name}.localhost`, 'localhost', '127.0.0.1'])
  const pad = (text) => text + '\n'.repeat(PEM_SIZE - text.length)
  const cert = pad(fs.readFileSync(files.cert, 'utf8'))
  const x509 = new crypto.X509Certificate(cert)
  return { name, cert, key: pad(fs.readFileSync(files.key, 'utf8')), fingerprint: x509.fingerprint256, subject: `CN=${name}.localhost`, serial: x509.serialNumber }
}

const live = () => ({ cert: path.join(dir, 'site.crt'), key: path.join(dir, 'site.key') })

/** As a renewal tool does it: each file written aside, then renamed over the live one (key first). */
function renew (c) {
  for (const [file, text] of [[live().key, c.key], [live().cert, c.cert]]) {
    const tmp = `${file}.tmp`
    fs.writeFileSync(tmp, text)
    fs.utimesSync(tmp, MTIME, MTIME)
    fs.renameSync(tmp, file)
  }
}

/**
 * Overwrites the live files in place with a certificate of the same size and puts their
 * modification time back: the file watcher (it compares mtime, size and inode) has
 * nothing to notice, so only `httpsys reload` can bring it in.
 */
function blindWrite (c) {
  for (const [file, text] of [[live().key, c.key], [live().cert, c.cert]]) {
    const fd = fs.openSync(file, 'r+')
    try {
      fs.writeSync(fd, text, 0)
      fs.futimesSync(fd, MTIME, MTIME)
    } finally {
      fs.closeSync(fd)
    }
  }
}

/** `httpsys start -c` of one https app on `port` with the config's tls entry for the live files. */
function startSite (port) {
  const config = writeConfig(dir, {
    tls: [{ port, cert: './site.crt', key: './site.key' }],
    apps: [{ name: 'web', script: path.join(APPS, 'https-app.js'), urls: [`https://+:${port}/`], env: { APP_PORT: String(port) }, kill_timeout: '5s' }]
  })
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  run = start(['-c', config], { env })
  return { config, env }
}

/** One HTTPS GET: { status, fingerprint (the server's certificate), socket, started, done }; rejects on failure. */
function get (port, { agent = false, timeout = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const req = https.get({ host: '127.0.0.1', port, path: '/load', agent, rejectUnauthorized: false, timeout }, (res) => {
      const socket = res.socket // gone from res once a keep-alive socket is back in its pool
      const fingerprint = socket.getPeerCertificate().fingerprint256
      res.resume()
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`))
        resolve({ status: res.statusCode, fingerprint, socket, started, done: Date.now() })
      })
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`timed out after ${timeout} ms`)))
    req.on('error', reject)
  })
}

/**
 * HTTPS requests one after the other from `kept` clients sharing keep-alive connections
 * and from `fresh` clients opening a new connection (a full handshake: no agent, no
 * session to resume) for each, until stop().
 */
function loadLoop (port, { kept = 3, fresh = 2 } = {}) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: kept, rejectUnauthorized: false })
  const state = {
    sent: 0,
    failed: [],
    fresh: [], // { started, done, fingerprint }
    sockets: new Map(), // keep-alive socket -> { opened, fingerprint, uses: [done...] }
    stopped: false
  }
  const client = async (options) => {
    while (!state.stopped) {
      state.sent++
      try {
        const res = await get(port, options)
        if (options.agent === false) {
          state.fresh.push({ started: res.started, done: res.done, fingerprint: res.fingerprint })
        } else {
          let s = state.sockets.get(res.socket)
          if (s === undefined) state.sockets.set(res.socket, (s = { opened: res.done, fingerprint: res.fingerprint, uses: [] }))
          s.uses.push(res.done)
          if (res.fingerprint !== s.fingerprint) state.failed.push('a keep-alive connection changed certificate')
        }
      } catch (err) {
        state.failed.push(err.message)
      }
    }
  }
  const all = Promise.all([
    ...Array.from({ length: kept }, () => client({ agent })),
    ...Array.from({ length: fresh }, () => client({ agent: false }))
  ])
  state.stop = async () => {
    state.stopped = true
    await all
    agent.destroy()
    return state
  }
  return state
}

test('a renewed certificate under load: no request fails, new handshakes get it within seconds, connections up keep theirs; `httpsys reload` takes a third', async () => {
  const [one, two, three] = ['one', 'two', 'three'].map(makeCert)
  expect(new Set([one.serial, two.serial, three.serial]).size).toBe(3)
  renew(one)
  const port = await freePort()
  const { config, env } = startSite(port)
  await run.waitFor((r) => r.event === 'ready')
  expect((await get(port)).fingerprint).toBe(one.fingerprint)

  const load = loadLoop(port)
  try {
    expect(await waitUntil(() => load.fresh.length >= 5 && [...load.sockets.values()].every((s) => s.uses.length >= 3) && load.sockets.size === 3, 15000)).toBe(true)
    const upBefore = [...load.sockets.values()]

    // 1. the files are renewed; the hub sees it by itself
    const renewed = Date.now()
    renew(two)
    expect(await waitUntil(() => load.fresh.some((r) => r.fingerprint === two.fingerprint), 15000)).toBe(true)
    const firstNew = load.fresh.find((r) => r.fingerprint === two.fingerprint)
    // polled every 2 s (src/tls-store.js), then 0.5 s for the rest of the renewal:
    // about 2.5 s, with room for a busy machine (a poll slower than that is a bug)
    expect(firstNew.done - renewed).toBeLessThan(6000)
    expect(run.records.some((r) => r.event === 'tls-reload' && r.subject === two.subject && r.port === port)).toBe(true)
    // the connections that were up keep serving, with the certificate they began with
    expect(await waitUntil(() => upBefore.every((s) => s.uses.some((t) => t > firstNew.done + 300)), 15000)).toBe(true)
    for (const s of upBefore) expect(s.fingerprint).toBe(one.fingerprint)
    const afterRenewal = load.fresh.length
    expect(await waitUntil(() => load.fresh.length >= afterRenewal + 5, 15000)).toBe(true)
    // once one new handshake had it, every later one has it
    expect(load.fresh.filter((r) => r.started > firstNew.done).map((r) => r.fingerprint)).toEqual(
      load.fresh.filter((r) => r.started > firstNew.done).map(() => two.fingerprint))

    // 2. a third certificate that only `httpsys reload` can see (blindWrite)
    blindWrite(three)
    const asked = Date.now()
    const reload = await cli(['reload', 'all', '-c', config], { env })
    expect(reload.stderr).toBe('')
    expect(reload.code).toBe(0)
    expect((await get(port)).fingerprint).toBe(three.fingerprint)
    const loaded = run.records.filter((r) => r.event === 'tls-reload' && r.subject === three.subject)
    expect(loaded).toHaveLength(1)
    expect(loaded[0].time).toBeGreaterThanOrEqual(asked)
    const reloaded = Date.now()
    expect(await waitUntil(() => load.fresh.some((r) => r.started > reloaded) && upBefore.every((s) => s.uses.some((t) => t > reloaded)), 15000)).toBe(true)
    expect(load.fresh.filter((r) => r.started > reloaded).every((r) => r.fingerprint === three.fingerprint)).toBe(true)
  } finally {
    await load.stop()
  }
  if (process.env.HTTPSYS_TEST_REPORT) console.log(`cert reload under load: sent ${load.sent}, fresh ${load.fresh.length}, failed ${load.failed.length}`)
  expect(load.failed).toEqual([])
  expect(load.fresh.length).toBeGreaterThan(10)
  // no keep-alive connection was dropped: the agent never had to open a fourth
  expect(load.sockets.size).toBe(3)
  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
})

test('a certificate file replaced by garbage: the old certificate keeps serving, the records name the file, a good one is taken again', async () => {
  const [one, two] = ['one', 'two'].map(makeCert)
  renew(one)
  const port = await freePort()
  const { config, env } = startSite(port)
  await run.waitFor((r) => r.event === 'ready')
  const load = loadLoop(port, { kept: 2, fresh: 1 })
  // (the hub's record, or under HTTPSYS_ROUTER=native the supervisor's router part, which reads the files)
  const failedReload = (r) => r.level >= 50 && (r.component === 'hub' || r.component === 'router') && typeof r.msg === 'string' && r.msg.includes(live().cert) &&
    JSON.stringify(r.err || {}).includes('ERR_HTTPSYS_TLS_CERT')
  try {
    expect(await waitUntil(() => load.fresh.length >= 3, 15000)).toBe(true)

    // overwritten in place, as an editor or a careless copy does
    fs.writeFileSync(live().cert, 'this is not a certificate\n')
    await run.waitFor(failedReload, { timeout: 15000 })
    const record = run.records.find(failedReload)
    expect(record.port).toBe(port)
    expect(record.err).toMatchObject({ code: 'ERR_HTTPSYS_TLS_CERT', file: live().cert })
    expect(record.msg).toMatch(/not reloaded \(the one loaded before keeps serving\)/)
    expect(record.msg).toMatch(/no PEM certificate/)
    expect((await get(port)).fingerprint).toBe(one.fingerprint)

    // `httpsys reload` reads the broken file again: the apps still reload, and the
    // command says which certificate did not load, with its code, and exits 1
    const reload = await cli(['reload', 'all', '-c', config], { env })
    expect(reload.stdout).toMatch(/reloaded in \d+ ms/)
    expect(reload.stderr).toContain(`The certificate file ${live().cert} did not load again`)
    expect(reload.stderr).toContain('ERR_HTTPSYS_TLS_RELOAD_FAILED')
    expect(reload.code).toBe(1)
    expect(run.records.filter(failedReload).length).toBeGreaterThanOrEqual(2)
    expect(run.records.some((r) => r.event === 'tls-reload-failed' && r.file === live().cert)).toBe(true)
    expect((await get(port)).fingerprint).toBe(one.fingerprint)

    // a good certificate written next is taken
    renew(two)
    expect(await waitUntil(() => load.fresh.some((r) => r.fingerprint === two.fingerprint), 15000)).toBe(true)
    expect((await get(port)).fingerprint).toBe(two.fingerprint)
    await sleep(200)
  } finally {
    await load.stop()
  }
  expect(load.failed).toEqual([])
  expect(load.sockets.size).toBe(2)
  expect(run.records.some((r) => r.event === 'tls-reload' && r.subject === two.subject)).toBe(true)
  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
})
