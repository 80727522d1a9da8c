'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createLogger, prettyStream } = require('../../../src/supervisor/output')

test('pretty output prefixes worker lines with app#inst and keeps one line per record', () => {
  const out = []
  const stream = prettyStream({ write (s) { out.push(s) } })
  stream.write(JSON.stringify({ level: 30, time: Date.now(), pid: 1, app: 'api', inst: 0, stream: 'stdout', msg: 'hello' }) + '\n')
  stream.write(JSON.stringify({ level: 30, time: Date.now(), event: 'exit', app: 'web', inst: 2, pid: 5, code: 1, signal: null, msg: 'exited with code 1' }) + '\n')
  stream.write(JSON.stringify({ level: 30, time: Date.now(), component: 'hub', msg: 'listening' }) + '\n')
  const text = out.join('').replace(/\u001b\[[0-9;]*m/g, '') // eslint-disable-line no-control-regex
  const lines = text.trim().split('\n')
  expect(lines).toHaveLength(3)
  expect(lines[0]).toMatch(/INFO.*api#0 \| hello$/)
  // lifecycle fields are spelled out in the message: not repeated as an object
  expect(lines[1]).toMatch(/web#2 \| exited with code 1$/)
  expect(lines[2]).toMatch(/hub \| listening$/)
})

test('JSON lines when the destination is not a terminal', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-out-')), 'log')
  const fd = fs.openSync(file, 'w')
  try {
    const logger = createLogger({ fd, level: 'info' })
    logger.info({ event: 'spawn', app: 'a', inst: 0, pid: 3 }, 'started pid 3')
    logger.debug('hidden')
    // records are written once per tick; flush is what the supervisor does before exit
    logger.flush()
  } finally {
    fs.closeSync(fd)
  }
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  expect(lines).toEqual([{ level: 30, time: expect.any(Number), event: 'spawn', app: 'a', inst: 0, pid: 3, msg: 'started pid 3' }])
})

test('in colour, each app\'s prefix has a colour of its own, the same for every instance and every run', () => {
  const out = []
  const stream = prettyStream({ write (s) { out.push(s) } }, { colorize: true })
  const line = (app, inst) => JSON.stringify({ level: 30, time: Date.now(), app, inst, stream: 'stdout', msg: 'x' }) + '\n'
  for (const [app, inst] of [['api', 0], ['api', 1], ['web', 0]]) stream.write(line(app, inst))

  const prefixColour = (text, who) => new RegExp(`(\\u001b\\[[0-9;]*m)${who}\\u001b\\[`).exec(text)[1]
  const [api0, api1, web0] = out
  expect(prefixColour(api0, 'api#0')).toBe(prefixColour(api1, 'api#1'))
  expect(prefixColour(web0, 'web#0')).not.toBe(prefixColour(api0, 'api#0'))
  const plain = []
  prettyStream({ write (s) { plain.push(s) } }, { colorize: false }).write(line('api', 0))
  expect(plain[0]).not.toMatch(/\u001b/) // eslint-disable-line no-control-regex
})
