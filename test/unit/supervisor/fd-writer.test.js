'use strict'

// The supervisor's stdout when its reader stops (`httpsys start | less` left on a page):
// the supervisor (and the router it hosts) must go on, memory stays bounded, and the
// reader learns how many records it missed once it reads again.

const { spawn } = require('node:child_process')
const path = require('node:path')

const WRITER = path.join(__dirname, '..', '..', '..', 'src', 'supervisor', 'fd-writer')

// writes 20 MB of records to a stdout nobody reads, counting timer ticks meanwhile;
// the reader counts as stopped after 200 ms (1 s by default)
const CHILD = `
const { FdWriter } = require(${JSON.stringify(WRITER)})
const w = new FdWriter(1, { stallMs: 200 })
let ticks = 0
const ticker = setInterval(() => ticks++, 5)
const pad = 'p'.repeat(1000)
let n = 0
let maxGap = 0
let last = Date.now()
function batch () {
  maxGap = Math.max(maxGap, Date.now() - last)
  last = Date.now()
  for (let i = 0; i < 500 && n < 20000; i++) w.write(JSON.stringify({ n: n++, pad }) + '\\n')
  if (n < 20000) return n === 6000 ? setTimeout(batch, 300) : setImmediate(batch)
  setTimeout(() => process.send({ ticks, maxGap, dropped: w.dropped, kept: w.chunkBytes + w.pendingLength }), 200)
}
batch()
process.on('message', () => {
  clearInterval(ticker)
  w.write(JSON.stringify({ last: true }) + '\\n')
  process.exit(0)
})
`

const linuxOrMac = process.platform === 'win32' ? test.skip : test
linuxOrMac('a stdout nobody reads: the event loop goes on, 8 MB kept, the rest counted and reported', async () => {
  const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  try {
    const report = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the writer blocked its process: no report within 10 s')), 10000)
      child.once('message', (m) => { clearTimeout(timer); resolve(m) })
    })
    expect(report.maxGap).toBeLessThan(500)
    expect(report.ticks).toBeGreaterThan(10)
    expect(report.kept).toBeLessThanOrEqual(8 * 1024 * 1024 + 2048)
    expect(report.dropped).toBeGreaterThan(0)

    // the reader comes back: everything kept, then one notice, then what follows
    let text = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => { text += chunk })
    for (let i = 0; i < 500 && !text.includes('output:dropped'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    child.send('exit')
    await new Promise((resolve) => child.stdout.once('end', resolve))
    const records = text.trim().split('\n').map((l) => JSON.parse(l))
    const notice = records.find((r) => r.event === 'output:dropped')
    expect(notice).toMatchObject({ level: 40, count: report.dropped, msg: `${report.dropped} records dropped: stdout was not read` })
    const numbered = records.filter((r) => r.n !== undefined).map((r) => r.n)
    expect(numbered).toEqual(numbered.map((_, i) => i)) // the oldest kept, in order, none cut
    expect(numbered.length + notice.count).toBe(20000)
    // the notice sits where the gap is; a record written just before exit still arrives
    expect(records.indexOf(notice)).toBe(numbered.length)
    expect(records[records.length - 1]).toEqual({ last: true })
  } finally {
    child.kill('SIGKILL')
  }
}, 30000)

linuxOrMac('a reader slower than a burst loses nothing', async () => {
  const child = spawn(process.execPath, ['-e', `
    const { FdWriter } = require(${JSON.stringify(WRITER)})
    const w = new FdWriter(1)
    for (let n = 0; n < 20000; n++) w.write(JSON.stringify({ n, pad: 'q'.repeat(1000) }) + '\\n')
    // exits once all is written: the bounded flush at exit is not what is tested here
    setInterval(() => { if (w.chunkBytes + w.pendingLength === 0) process.exit(0) }, 20)
  `], { stdio: ['ignore', 'pipe', 'inherit'] })
  let text = ''
  child.stdout.setEncoding('utf8')
  // 20 MB, read in small bites with pauses: slow, never stopped for long
  child.stdout.on('data', (chunk) => {
    text += chunk
    child.stdout.pause()
    setTimeout(() => child.stdout.resume(), 2)
  })
  await new Promise((resolve) => child.stdout.once('end', resolve))
  const records = text.trim().split('\n').map((l) => JSON.parse(l))
  expect(records.filter((r) => r.event === 'output:dropped')).toEqual([])
  expect(records.map((r) => r.n)).toEqual(records.map((_, i) => i))
  expect(records).toHaveLength(20000)
}, 30000)
