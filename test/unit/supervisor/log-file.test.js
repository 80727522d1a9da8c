'use strict'

// Log files written by the supervisor: rotation by size and by day through rename (never
// copy-truncate), the newest N kept, and no record lost or cut across two files.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { LogFile } = require('../../../src/supervisor/log-file')
const { LogRouter } = require('../../../src/supervisor/log-router')

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

test('the router sends each record to its app\'s file, keeps recent ones, and feeds followers', () => {
  const out = []
  const router = new LogRouter({ write: (l) => out.push(l) }, { ringSize: 1 })
  const file = new LogFile(dir, 'api')
  router.addFile('api', file)
  const followed = []
  const unsubscribe = router.subscribe((line, app) => followed.push(app))
  router.write('{"app":"api","msg":"a"}\n')
  router.write('{"msg":"supervisor"}\n')
  router.write('{"app":"web","msg":"b"}\n')
  unsubscribe()
  router.write('{"app":"api","msg":"c"}\n')
  router.write('not json\n')
  router.close()
  expect(out).toHaveLength(5)
  expect(followed).toEqual(['api', undefined, 'web'])
  expect(fs.readFileSync(file.file, 'utf8')).toBe('{"app":"api","msg":"a"}\n{"app":"api","msg":"c"}\n')
  // a ring of 1 per app: api's first record is gone, the others' stay
  expect(router.recent({ lines: 10 })).toEqual(['{"app":"web","msg":"b"}\n', '{"app":"api","msg":"c"}\n', 'not json\n'])
  expect(router.recent({ app: 'api', lines: 10 })).toEqual(['{"app":"api","msg":"c"}\n'])
  expect(router.recent({ lines: 1 })).toEqual(['not json\n'])
})
