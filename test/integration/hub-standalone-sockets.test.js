'use strict'

// A standalone app (node -r register, the process's own hub) makes its hub's worker
// socket in the temp folder and removes it at exit. One that was killed cannot: the
// next standalone app of the same user removes what such processes left, and nothing
// else (a live process's socket, another name, a file that is not a socket).

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { removeDeadSockets } = require('../../src/local-socket')
const { OWN_SOCKET } = require('../../src/preload/standalone-hub')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { waitUntil } = require('../fixtures/apps/harness')

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-stale-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A standalone app listening on a free port, its hub's socket in TMPDIR=dir. */
function startApp () {
  const env = standaloneEnv({ TMPDIR: dir, HTTPSYS_ROUTER: 'hub' }) // the in-process hub's socket files
  const child = spawn(process.execPath, ['-r', REGISTER, '-e',
    "require('node:http').createServer((q, s) => s.end('ok')).listen(0, function () { console.log('up ' + this.address().port) })"],
  { env, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve(child))
    child.once('exit', (code) => reject(new Error(`the app exited ${code}`)))
  })
}

const sockets = () => fs.readdirSync(dir).filter((f) => /^httpsys-\d+-[0-9a-f]{8}\.sock$/.test(f)).sort()

test('a killed standalone app\'s socket is removed by the next one; a live one\'s is kept', async () => {
  const killed = await startApp()
  expect(await waitUntil(() => sockets().length === 1, 10000)).toBe(true)
  const left = sockets()[0]
  expect(left).toMatch(new RegExp(`^httpsys-${killed.pid}-`))
  killed.kill('SIGKILL')
  await new Promise((resolve) => killed.once('exit', resolve))
  expect(sockets()).toEqual([left]) // SIGKILL: nothing could remove it

  const live = await startApp()
  try {
    expect(await waitUntil(() => !sockets().includes(left), 10000)).toBe(true)
    expect(sockets()).toEqual([expect.stringMatching(new RegExp(`^httpsys-${live.pid}-`))])
  } finally {
    live.kill('SIGKILL')
    await new Promise((resolve) => live.once('exit', resolve))
  }
}, 30000)

test('only sockets named like ours, of this user, whose process is gone are removed', async () => {
  const listening = []
  const listen = async (name) => {
    const server = net.createServer()
    await new Promise((resolve) => server.listen(path.join(dir, name), resolve))
    listening.push(server)
  }
  try {
    await listen(`httpsys-${process.pid}-0123abcd.sock`) // a live process's
    await listen('httpsys-999999998-89abcdef.sock') // a process that is gone
    await listen('something-else.sock') // not ours
    fs.writeFileSync(path.join(dir, 'httpsys-999999999-0123abcd.sock'), 'not a socket')
    const removed = removeDeadSockets(dir, OWN_SOCKET, { alive: (pid) => pid === process.pid })
    expect(removed).toEqual([path.join(dir, 'httpsys-999999998-89abcdef.sock')])
    expect(fs.readdirSync(dir).sort()).toEqual([`httpsys-${process.pid}-0123abcd.sock`, 'httpsys-999999999-0123abcd.sock', 'something-else.sock'])
    // another user's socket of a gone process is not ours to remove
    await listen('httpsys-999999997-aaaabbbb.sock')
    expect(removeDeadSockets(dir, OWN_SOCKET, { alive: () => false, uid: process.getuid() + 1 })).toEqual([])
  } finally {
    for (const server of listening) server.close()
  }
})
