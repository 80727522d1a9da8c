'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseLatency, parseWrk, parseAutocannon, command } = require('../../../bench/lib/load')

const WRK = `Running 2s test @ http://127.0.0.1:18232/
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   575.48us    1.50ms  26.89ms   93.87%
    Req/Sec    39.93k    23.69k   69.03k    45.45%
  Latency Distribution
     50%  188.00us
     75%  359.00us
     90%    1.27ms
     99%    2.50s
  43615 requests in 2.10s, 7.45MB read
  Socket errors: connect 1, read 2, write 3, timeout 4
  Non-2xx or 3xx responses: 5
Requests/sec:  20769.05
Transfer/sec:      3.55MB
`

test('parseLatency turns wrk\'s units into milliseconds', () => {
  expect(parseLatency('188.00us')).toBeCloseTo(0.188)
  expect(parseLatency('1.27ms')).toBe(1.27)
  expect(parseLatency('2.01s')).toBeCloseTo(2010)
  expect(parseLatency('1.50m')).toBe(90000)
  expect(() => parseLatency('fast')).toThrow()
})

test('parseWrk: request count, req/s, p50/p99 in ms, errors of every kind added up', () => {
  expect(parseWrk(WRK)).toEqual({
    requests: 43615,
    rps: 20769.05,
    p50: 0.188,
    p99: 2500,
    errors: 15,
    socketErrors: { connect: 1, read: 2, write: 3, timeout: 4 }
  })
})

test('parseWrk: a clean run has no errors; no result at all throws', () => {
  const clean = WRK.replace(/ {2}Socket errors.*\n/, '').replace(/ {2}Non-2xx.*\n/, '')
  expect(parseWrk(clean)).toMatchObject({ errors: 0, socketErrors: null })
  expect(() => parseWrk('unable to connect to 127.0.0.1:1 Connection refused')).toThrow(/no result/)
})

test('parseAutocannon maps its JSON to the same figures', () => {
  expect(parseAutocannon({ requests: { total: 900, average: 300 }, latency: { p50: 1, p99: 7 }, non2xx: 1, errors: 2, timeouts: 3 }))
    .toEqual({ requests: 900, rps: 300, p50: 1, p99: 7, errors: 6, socketErrors: null })
})

test('command: wrk gets Connection: close and an upload script; autocannon refuses a connection per request', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'load-test-'))
  try {
    const close = command('wrk', { url: 'http://h/', connections: 7, seconds: 3, close: true, tmpDir: dir })
    expect(close.cmd).toBe('wrk')
    expect(close.args).toEqual(['-t1', '-c7', '-d3s', '--latency', '-H', 'Connection: close', 'http://h/'])
    const up = command('wrk', { url: 'http://h/', connections: 7, seconds: 3, uploadBytes: 1024, tmpDir: dir })
    const script = fs.readFileSync(up.args[up.args.indexOf('-s') + 1], 'utf8')
    expect(script).toContain('wrk.method = "POST"')
    expect(script).toContain('string.rep("x", 1024)')
    expect(command('autocannon', { url: 'http://h/', connections: 7, seconds: 3, close: true, tmpDir: dir }).skip).toMatch(/apt-get install wrk/)
    const ac = command('autocannon', { url: 'http://h/', connections: 7, seconds: 3, uploadBytes: 1024, tmpDir: dir })
    expect(ac.args).toEqual(expect.arrayContaining(['-m', 'POST', '-i']))
    expect(fs.statSync(ac.args[ac.args.indexOf('-i') + 1]).size).toBe(1024)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
