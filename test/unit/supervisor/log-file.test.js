'use strict'

// Log files written by the supervisor: rotation by size and by day through rename (never
// copy-truncate), the newest N kept, and no record lost or cut across two files.

const { spawnSync } = require('node:child_process')
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

  // (a link to /dev/full would be refused as unsafe: the disk fills under a real file)
  test('a full disk: one warning, no throw, stdout keeps every record', async () => {
    const { out, dispatcher } = dispatched(dir, { maxSize: 64 })
    const write = fs.writeSync
    fs.writeSync = () => { throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }) }
    try {
      for (let i = 0; i < 20; i++) {
        dispatcher.write(`{"app":"api","n":${i},"pad":"${'z'.repeat(40)}"}\n`)
        if (i % 3 === 0) await tick()
      }
      await tick()
    } finally {
      fs.writeSync = write
    }
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

// issue 23: a link planted in a shared log_dir must not have the supervisor append app
// output (secrets apps print included) to the file the link names
describe('log files are opened safely', () => {
  const posix = process.platform === 'win32' ? test.skip : test
  const tick = () => new Promise((resolve) => setImmediate(resolve))

  function planted () {
    const victim = path.join(dir, 'victim.txt')
    fs.writeFileSync(victim, 'precious\n')
    return victim
  }

  test('a symlink at <name>.log is refused with a coded error; the target is untouched; removing it lets writing resume', async () => {
    const victim = planted()
    const link = path.join(dir, 'api.log')
    fs.symlinkSync(victim, link)
    const out = []
    const dispatcher = new LogDispatcher({ write: (l) => out.push(l) })
    const file = new LogFile(dir, 'api', { retryMs: 50 })
    dispatcher.addFile('api', file)
    dispatcher.write('{"app":"api","msg":"DB_PASSWORD=hunter2"}\n')
    await tick()
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n')
    const warning = out.map((l) => JSON.parse(l)).find((r) => r.event === 'log-file:error')
    expect(warning).toMatchObject({ code: 'ERR_HTTPSYS_LOG_FILE_UNSAFE', file: link })
    expect(warning.msg).toContain(`it is a symbolic link to ${victim}`)
    expect(warning.msg).toContain(`rm ${link}`)
    // stdout still had the record
    expect(out[0]).toContain('hunter2')

    fs.unlinkSync(link)
    await new Promise((resolve) => setTimeout(resolve, 80))
    dispatcher.write('{"app":"api","msg":"back"}\n')
    await tick()
    dispatcher.close()
    expect(fs.lstatSync(link).isFile()).toBe(true)
    expect(fs.readFileSync(link, 'utf8')).toBe('{"app":"api","msg":"back"}\n')
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n')
  })

  test('a symlink planted between a rotation\'s rename and its reopen is refused too', () => {
    const victim = planted()
    const failures = []
    const file = new LogFile(dir, 'job', { maxSize: 40, onError: (f) => failures.push(f) })
    file.write('{"n":1,"pad":"xxxxxxxxxxxxxxxxxxxxxx"}\n')
    file.flush()
    const rename = fs.renameSync
    fs.renameSync = (from, to) => {
      rename(from, to)
      fs.symlinkSync(victim, from)
    }
    try {
      file.write('{"n":2,"secret":"hunter2","pad":"xxxxxxx"}\n')
      file.flush()
    } finally {
      fs.renameSync = rename
    }
    file.close()
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n')
    expect(failures).toEqual([expect.objectContaining({ code: 'ERR_HTTPSYS_LOG_FILE_UNSAFE', file: file.file })])
  })

  posix('a hard link at <name>.log is refused; the other file is untouched', () => {
    const victim = planted()
    fs.linkSync(victim, path.join(dir, 'api.log'))
    const failures = []
    const file = new LogFile(dir, 'api', { onError: (f) => failures.push(f) })
    file.write('{"msg":"hunter2"}\n')
    file.close()
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n')
    expect(failures).toEqual([expect.objectContaining({ code: 'ERR_HTTPSYS_LOG_FILE_UNSAFE', message: expect.stringContaining('1 other hard link') })])
  })

  // a FIFO nobody reads blocked open() for ever, and with it the supervisor and the
  // router it hosts: run in a child so a regression fails instead of hanging the suite
  const hasMkfifo = process.platform !== 'win32' && spawnSync('mkfifo', ['--help']).error === undefined
  ;(hasMkfifo ? test : test.skip)('a FIFO at <name>.log is refused at once, not waited on', () => {
    expect(spawnSync('mkfifo', [path.join(dir, 'api.log')]).status).toBe(0)
    const script = `
      const { LogFile } = require(${JSON.stringify(require.resolve('../../../src/supervisor/log-file'))})
      const file = new LogFile(${JSON.stringify(dir)}, 'api', { onError: (f) => console.log(JSON.stringify(f)) })
      file.write('{"msg":"x"}\\n')
      file.close()`
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 5000 })
    expect(r.signal).toBe(null)
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 'ERR_HTTPSYS_LOG_FILE_UNSAFE', message: expect.stringContaining('not a regular file') })
  })

  posix('created 0640 (group may read, others not), as the daemon\'s log is 0600; log_dir created 0750', () => {
    const old = process.umask(0o022)
    try {
      const file = new LogFile(path.join(dir, 'logs'), 'api', { maxSize: 40 })
      file.write('{"n":1,"pad":"xxxxxxxxxxxxxxxxxxxxxx"}\n')
      file.write('{"n":2,"pad":"xxxxxxxxxxxxxxxxxxxxxx"}\n')
      file.close()
      expect(file.rotated()).toHaveLength(1)
      for (const f of [file.file, ...file.rotated()]) expect((fs.statSync(f).mode & 0o777).toString(8)).toBe('640')
      expect((fs.statSync(path.join(dir, 'logs')).mode & 0o777).toString(8)).toBe('750')
    } finally {
      process.umask(old)
    }
  })

  test('the daemon\'s log (start -d) is refused when it is a symlink, before anything starts', async () => {
    const { startDaemon, daemonLogFile } = require('../../../src/supervisor/daemon')
    const victim = planted()
    const runtime = path.join(dir, 'run')
    fs.mkdirSync(runtime, { mode: 0o700 })
    const config = { apps: [{ name: 'web' }], source: { configFile: path.join(dir, 'httpsys.config.js') } }
    fs.symlinkSync(victim, daemonLogFile(config, runtime))
    const env = process.env.HTTPSYS_RUNTIME_DIR
    process.env.HTTPSYS_RUNTIME_DIR = runtime
    try {
      await expect(startDaemon(config, [], { bin: path.join(dir, 'never-run.js') })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_LOG_FILE_UNSAFE' })
    } finally {
      if (env === undefined) delete process.env.HTTPSYS_RUNTIME_DIR
      else process.env.HTTPSYS_RUNTIME_DIR = env
    }
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n')
  })

  test('the Windows service\'s log (service run) is refused when it is a symlink', async () => {
    const { runService } = require('../../../src/service/run')
    const { createScm } = require('../../../src/service/scm')
    const { createFakeAddon } = require('../../helpers/fake-addon')
    const victim = planted()
    const log = path.join(dir, 'service.log')
    fs.symlinkSync(victim, log)
    const addon = createFakeAddon()
    const host = createScm(() => addon).host
    const done = runService({ name: 'shop', configFile: path.join(dir, 'httpsys.config.js') }, {
      host, logFile: log, loadConfig: async () => ({ apps: [] }), startSupervisor: async () => { throw new Error('not reached') }
    })
    addon.scm.host.emit('start')
    await expect(done).rejects.toMatchObject({ code: 'ERR_HTTPSYS_LOG_FILE_UNSAFE' })
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n')
  })
})
