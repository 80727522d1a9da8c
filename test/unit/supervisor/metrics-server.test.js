'use strict'

// The metrics endpoint's answers to what a client gets wrong: a malformed request is
// the client's 400, not a 500 with an error record (and its stack) per probe. The
// numbers it serves are tested end to end in test/integration/status-metrics.test.js.

const net = require('node:net')
const { MetricsServer } = require('../../../src/supervisor/metrics-server')

let server
let records
beforeEach(async () => {
  records = []
  const logger = { info () {}, error: (obj, msg) => records.push({ ...obj, msg }) }
  const supervisor = {
    groups: [{ name: 'api', state: () => 'ready', instances: [{ state: 'ready' }] }],
    status: async () => ({ apps: [] })
  }
  server = new MetricsServer({ supervisor, listen: { host: '127.0.0.1', port: 0 }, logger })
  await server.start()
})
afterEach(() => server.close())

/** One raw HTTP/1.0 request (the target exactly as written, the body not chunked). */
function raw (target) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.server.address().port, '127.0.0.1')
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (d) => { text += d })
    socket.on('error', reject)
    socket.on('end', () => resolve({ status: Number(text.split(' ')[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) }))
    socket.end(`GET ${target} HTTP/1.0\r\nHost: x\r\n\r\n`)
  })
}

test.each([
  ['a truncated UTF-8 percent-escape', '/healthz/%E0%A4'],
  ['a percent sign with no hex digits', '/healthz/%zz'],
  ['a target that is no URL', '//['],
  ['an authority with a bad port', '//:99999/healthz']
])('%s is a 400 with the reason, and no error record', async (what, target) => {
  const r = await raw(target)
  expect(r.status).toBe(400)
  expect(r.body).toMatch(/^bad request: /)
  expect(records).toEqual([])
})

test('a well-formed escape still names the app', async () => {
  expect(await raw('/healthz/%61pi')).toMatchObject({ status: 200, body: expect.stringContaining('"name":"api"') })
  expect((await raw('/healthz/n%C3%A9')).status).toBe(404)
})

test('the native router\'s own process: its CPU seconds and resident memory; none for a router inside the supervisor', async () => {
  const status = { apps: [], connections: 3, router: { pid: 7, cpu: 2, cpuMicros: 1500000, memory: 9437184, uptimeMs: 1000 } }
  server.supervisor.status = async () => status
  const body = (await raw('/metrics')).body
  expect(body).toMatch(/^httpsys_router_cpu_seconds_total 1\.5$/m)
  expect(body).toMatch(/^httpsys_router_resident_memory_bytes 9437184$/m)
  expect(body).toMatch(/^httpsys_router_connections 3$/m)
  status.router = null
  const hub = (await raw('/metrics')).body
  expect(hub).not.toMatch(/^httpsys_router_cpu_seconds_total /m)
  expect(hub).not.toMatch(/^httpsys_router_resident_memory_bytes /m)
})
