'use strict'

// Log files written by the supervisor: rotation by size and by day through rename (never
// copy-truncate), the newest N kept, and no record lost or cut across two files.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LogFile } = require('../../../src/supervisor/log-file')
const { LogDispatcher } = require('../../../src/supervisor/log-dispatcher')

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-logfile-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const readAll = (file) => {
  const rotated = file.rotated()
  return [...rotated, file.file].map((f) => fs.readFileSync(f, 'utf8')).join('')
}

test('size rotation: every record whole, in order, in exactly one file; the newest `keep` kept', async () => {
  const file = new LogFile(dir, 'api', { maxSize: 4096, keep: 1000 })
  const lines = []
  for (let i = 0; i < 2000; i++) {
    const line = JSON.stringify({ app: 'api', n: i, msg: 'x'.repeat(i % 97) }) + '\n'
    lines.push(line)
    file.write(line)
    if (i % 300 === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  file.close()
  const rotated = file.rotated()
  expect(rotated.length).toBeGreaterThan(10)
  for (const f of [...rotated, file.file]) {
    const text = fs.readFileSync(f, 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4096)
    for (const l of text.split('\n').slice(0, -1)) expect(() => JSON.parse(l)).not.toThrow()
  }
  expect(readAll(file)).toBe(lines.join(''))
})

test('keep: older rotated files are deleted', () => {
  const file = new LogFile(dir, 'web', { maxSize: 100, keep: 2 })
  for (let i = 0; i < 20; i++) {
    file.write(`{"n":${i},"pad":"${'y'.repeat(60)}"}\n`)
    file.flush()
  }
  file.close()
  expect(file.rotated()).toHaveLength(2)
  const kept = readAll(file).trim().split('\n').map((l) => JSON.parse(l).n)
  // the last records are all there, oldest ones gone
  expect(kept).toEqual(kept.slice().sort((a, b) => a - b))
  expect(kept[kept.length - 1]).toBe(19)
})

test('daily: the first write of a new day starts a new file', () => {
  const file = new LogFile(dir, 'job', { daily: true })
  file.write('{"day":1}\n')
  file.flush()
  file.day = 'a day that has passed'
  file.write('{"day":2}\n')
  file.close()
  expect(file.rotated()).toHaveLength(1)
  expect(fs.readFileSync(file.rotated()[0], 'utf8')).toBe('{"day":1}\n')
  expect(fs.readFileSync(file.file, 'utf8')).toBe('{"day":2}\n')
})

test('an existing file is appended to, not truncated', () => {
  fs.writeFileSync(path.join(dir, 'api.log'), '{"old":true}\n')
  const file = new LogFile(dir, 'api')
  file.write('{"new":true}\n')
  file.close()
  expect(fs.readFileSync(path.join(dir, 'api.log'), 'utf8')).toBe('{"old":true}\n{"new":true}\n')
})

test('the dispatcher sends each record to its app\'s file, keeps recent ones, and feeds followers', () => {
  const out = []
  const dispatcher = new LogDispatcher({ write: (l) => out.push(l) }, { ringSize: 1 })
  const file = new LogFile(dir, 'api')
  dispatcher.addFile('api', file)
  const followed = []
  const unsubscribe = dispatcher.subscribe((line, app) => followed.push(app))
  dispatcher.write('{"app":"api","msg":"a"}\n')
  dispatcher.write('{"msg":"supervisor"}\n')
  dispatcher.write('{"app":"web","msg":"b"}\n')
  unsubscribe()
  dispatcher.write('{"app":"api","msg":"c"}\n')
  dispatcher.write('not json\n')
  dispatcher.close()
  expect(out).toHaveLength(5)
  expect(followed).toEqual(['api', undefined, 'web'])
  expect(fs.readFileSync(file.file, 'utf8')).toBe('{"app":"api","msg":"a"}\n{"app":"api","msg":"c"}\n')
  // a ring of 1 per app: api's first record is gone, the others' stay
  expect(dispatcher.recent({ lines: 10 })).toEqual(['{"app":"web","msg":"b"}\n', '{"app":"api","msg":"c"}\n', 'not json\n'])
  expect(dispatcher.recent({ app: 'api', lines: 10 })).toEqual(['{"app":"api","msg":"c"}\n'])
  expect(dispatcher.recent({ lines: 1 })).toEqual(['not json\n'])
})

describe('a log file that cannot be written does not take the supervisor down', () => {
  function dispatched (logDir, options) {
    const out = []
    const dispatcher = new LogDispatcher({ write: (l) => out.push(l) })
    const file = new LogFile(logDir, 'api', options)
    dispatcher.addFile('api', file)
    return { out, dispatcher, file }
  }
  const tick = () => new Promise((resolve) => setImmediate(resolve))
  const warnings = (out) => out.map((l) => JSON.parse(l)).filter((r) => r.event === 'log-file:error')

  test('log_dir is a regular file: one warning, stdout keeps every record, opening retried later', async () => {
    const notDir = path.join(dir, 'not-a-dir')
    fs.writeFileSync(notDir, '')
    const { out, dispatcher, file } = dispatched(notDir, { retryMs: 50 })
    for (let i = 0; i < 5; i++) {
      dispatcher.write(`{"app":"api","n":${i}}\n`)
      await tick()
    }
    expect(out).toHaveLength(6)
    expect(warnings(out)).toEqual([expect.objectContaining({ level: 40, file: path.join(notDir, 'api.log'), code: expect.stringMatching(/^E(EXIST|NOTDIR)$/) })])
    // the directory appears: after retryMs the file is opened again
    fs.rmSync(notDir)
    fs.mkdirSync(notDir)
    await new Promise((resolve) => setTimeout(resolve, 80))
    dispatcher.write('{"app":"api","n":"back"}\n')
    await tick()
    dispatcher.close()
    expect(fs.readFileSync(file.file, 'utf8')).toBe('{"app":"api","n":"back"}\n')
    expect(warnings(out)).toHaveLength(1)
  })

  const linux = process.platform === 'linux' && fs.existsSync('/dev/full') ? test : test.skip
  linux('a full disk (a file linked to /dev/full): one warning, no throw, also at rotation', async () => {
    fs.symlinkSync('/dev/full', path.join(dir, 'api.log'))
    const { out, dispatcher } = dispatched(dir, { maxSize: 64 })
    for (let i = 0; i < 20; i++) {
      dispatcher.write(`{"app":"api","n":${i},"pad":"${'z'.repeat(40)}"}\n`)
      if (i % 3 === 0) await tick()
    }
    await tick()
    dispatcher.close()
    expect(out.filter((l) => l.includes('"app":"api"'))).toHaveLength(20)
    expect(warnings(out)).toEqual([expect.objectContaining({ code: 'ENOSPC', file: path.join(dir, 'api.log') })])
  })

  test('a failure while reopening after a rotation is caught too', () => {
    const failures = []
    const file = new LogFile(dir, 'job', { maxSize: 30, onError: (f) => failures.push(f) })
    file.write('{"n":1,"pad":"xxxxxxxxxxxxxx"}\n')
    file.flush()
    // the directory becomes unusable: the rename works, the reopen cannot
    const open = fs.openSync
    fs.openSync = () => { throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }) }
    try {
      file.write('{"n":2,"pad":"xxxxxxxxxxxxxx"}\n')
      expect(() => file.flush()).not.toThrow()
    } finally {
      fs.openSync = open
    }
    file.write('{"n":3}\n')
    expect(() => file.close()).not.toThrow()
    expect(failures).toEqual([expect.objectContaining({ code: 'EACCES' })])
  })
})
