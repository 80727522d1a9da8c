'use strict'

// Apps that serve no HTTP (queue consumers, cron jobs) run under httpsys too: with
// type: 'worker' (or --no-http) they are ready once started, get no queue, keep node's
// own http, and stop through the same IPC shutdown. A web app that never calls listen()
// is told about the switch.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, writeConfig } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-worker-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })

function app (source) {
  const file = path.join(dir, 'consumer.js')
  fs.writeFileSync(file, source)
  return file
}

test('--no-http: ready once started, node\'s own http, no queue variables, a quick graceful stop', async () => {
  const script = app(`
    const http = require('node:http')
    console.log('probe ' + JSON.stringify({ queue: process.env.HTTPSYS_QUEUE || null, hub: process.env.HTTPSYS_HUB || null, ownHttp: http.Server.name === 'Server' && !String(http.createServer).includes('queueBackend') }))
    process.on('SIGTERM', () => { console.log('cleaning up'); process.exit(0) })
    setInterval(() => {}, 1000)
  `)
  run = start([script, '--no-http'], { env: env() })
  const ready = await run.waitFor((r) => r.event === 'ready')
  expect(ready.via).toBe('started')
  expect(run.records.find((r) => r.event === 'app').msg).toBe('1 instance, no HTTP (type: worker)')
  const probe = JSON.parse((await run.waitFor((r) => typeof r.msg === 'string' && r.msg.startsWith('probe '))).msg.slice(6))
  expect(probe).toEqual({ queue: null, hub: null, ownHttp: true })
  const started = Date.now()
  run.signal('SIGINT')
  expect(await run.exited).toEqual({ code: 0, signal: null })
  expect(Date.now() - started).toBeLessThan(3000)
  expect(run.records.find((r) => r.msg === 'cleaning up')).toBeTruthy()
})

test('a web app that never calls listen() is told about type: "worker"', async () => {
  const script = app('setInterval(() => {}, 1000)\n')
  run = start(['-c', writeConfig(dir, { apps: [{ name: 'cron', script, ready_timeout: '500ms', max_restarts: 1 }] })], { env: env() })
  const timeout = await run.waitFor((r) => r.event === 'ready-timeout')
  expect(timeout.msg).toMatch(/^never listened within 500 ms; stopping it; if it serves no HTTP, give it type: "worker" \(or --no-http\)$/)
})

test('type: "worker" with urls is a config error naming the key', async () => {
  run = start(['-c', writeConfig(dir, { apps: [{ name: 'cron', script: app(''), type: 'worker', urls: ['http://+:8080/'] }] })], { env: env() })
  expect(await run.exited).toEqual({ code: 1, signal: null })
  expect(run.stderr).toMatch(/Invalid config at apps\[0\]\.type: is "worker", which serves no HTTP, but the app has urls\. Remove its urls/)
})
