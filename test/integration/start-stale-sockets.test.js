'use strict'

// A supervisor killed outright leaves its router's worker socket (hub-<pid>.sock) in the runtime
// directory; they used to pile up. The next start removes what is ours and dead, and
// nothing else.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, get, APPS } = require('../fixtures/apps/harness')

let run
let dir
const servers = []
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-stale-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  for (const server of servers.splice(0)) server.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A socket file as a crashed process leaves it: bound, then SIGKILL, never unlinked. */
function leftover (file) {
  const r = spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(file)}, () => process.kill(process.pid, 'SIGKILL'))`])
  expect(r.signal).toBe('SIGKILL')
  expect(fs.lstatSync(file).isSocket()).toBe(true)
}

test('the next start removes the dead supervisors\' worker sockets, and leaves live and foreign files alone', async () => {
  const runtime = path.join(dir, 'run')
  fs.mkdirSync(runtime, { mode: 0o700 })
  const dead = [path.join(runtime, 'hub-999999991.sock'), path.join(runtime, 'hub-999999992.sock')]
  for (const file of dead) leftover(file)
  // a live process's socket (this test's own pid, listening)
  const live = path.join(runtime, `hub-${process.pid}.sock`)
  const server = net.createServer()
  await new Promise((resolve) => server.listen(live, resolve))
  servers.push(server)
  const notOurs = path.join(runtime, 'hub-999999993.sock.txt')
  fs.writeFileSync(notOurs, 'a file, not a socket')
  const plainFile = path.join(runtime, 'hub-999999994.sock')
  fs.writeFileSync(plainFile, 'a regular file with a socket\'s name')

  const port = await freePort()
  run = start([path.join(APPS, 'pid-server.js'), '-u', `http://127.0.0.1:${port}/`], { env: { HTTPSYS_RUNTIME_DIR: runtime } })
  await run.waitFor((r) => r.event === 'ready')
  expect((await get(port, '/')).status).toBe(200)
  for (const file of dead) expect(fs.existsSync(file)).toBe(false)
  expect(fs.existsSync(live)).toBe(true)
  expect(fs.existsSync(notOurs)).toBe(true)
  expect(fs.existsSync(plainFile)).toBe(true)
})
