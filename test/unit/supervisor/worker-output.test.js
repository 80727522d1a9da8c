'use strict'

const pino = require('pino')
const { createLineSink } = require('../../../src/supervisor/worker-output')

function sink (level = 'info', stream = 'stdout') {
  const written = []
  const logger = pino({ level, base: null }, { write (line) { written.push(line) } })
  return { onLine: createLineSink(logger, { app: 'api', inst: 1, pid: 42, stream }), written }
}

test('a plain stdout line becomes one info record tagged with app, inst, pid and stream', () => {
  const { onLine, written } = sink()
  onLine('listening on 8080', false)
  expect(written).toHaveLength(1)
  expect(JSON.parse(written[0])).toEqual({ level: 30, time: expect.any(Number), pid: 42, app: 'api', inst: 1, stream: 'stdout', msg: 'listening on 8080' })
})

test('stderr lines are errors', () => {
  const { onLine, written } = sink('info', 'stderr')
  onLine('TypeError: x is not a function', false)
  expect(JSON.parse(written[0])).toMatchObject({ level: 50, stream: 'stderr' })
})

test('a pino line is merged: its level, time and fields kept, app and inst added, no double encoding', () => {
  const { onLine, written } = sink()
  onLine(JSON.stringify({ level: 40, time: 1700000000000, pid: 7, hostname: 'h', msg: 'slow', req: { url: '/' } }), false)
  const record = JSON.parse(written[0])
  expect(record).toEqual({ level: 40, time: 1700000000000, pid: 42, appPid: 7, hostname: 'h', msg: 'slow', req: { url: '/' }, app: 'api', inst: 1, stream: 'stdout' })
  expect(written[0].endsWith('\n')).toBe(true)
  expect(written[0].indexOf('\n')).toBe(written[0].length - 1)
})

test('JSON that is not a pino record stays a message', () => {
  const { onLine, written } = sink()
  onLine('{"hello":"world"}', false)
  expect(JSON.parse(written[0])).toMatchObject({ level: 30, msg: '{"hello":"world"}' })
})

test('records below the supervisor level are dropped', () => {
  const { onLine, written } = sink('warn')
  onLine('chatty', false)
  onLine(JSON.stringify({ level: 20, time: 1, msg: 'debug' }), false)
  onLine(JSON.stringify({ level: 50, time: 1, msg: 'bad' }), false)
  expect(written.map((l) => JSON.parse(l).msg)).toEqual(['bad'])
})

test('a truncated line says so', () => {
  const { onLine, written } = sink()
  onLine('{"level":30,"time":1,"msg":"cut', true)
  expect(JSON.parse(written[0])).toMatchObject({ truncated: true, msg: '{"level":30,"time":1,"msg":"cut' })
})

test('the worker pid stays authoritative over the pid an app logs', () => {
  const { onLine, written } = sink()
  onLine(JSON.stringify({ level: 30, time: 1, pid: 42, msg: 'same' }), false)
  onLine(JSON.stringify({ level: 30, time: 1, pid: 1, msg: 'other' }), false)
  const [same, other] = written.map((l) => JSON.parse(l))
  expect(same).toEqual({ level: 30, time: 1, pid: 42, msg: 'same', app: 'api', inst: 1, stream: 'stdout' })
  expect(other).toMatchObject({ pid: 42, appPid: 1, msg: 'other' })
})
