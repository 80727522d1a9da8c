'use strict'

// The /proc accounting behind the matrix's CPU/request and memory figures: a wrong field
// index or a tree that misses a process would make a multi-process server look cheap.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseStat, readProcs, treePids, treeTotals, cpuMsBetween, machineTicks, busyCoresBetween } = require('../../../bench/lib/procstat')

// fields 3..52 of proc(5), with the ones the harness reads set apart
function statLine ({ pid, comm = 'node', state = 'S', ppid = 1, utime = 0, stime = 0, cutime = 0, cstime = 0, starttime = 1000, rss = 0 }) {
  const f = new Array(50).fill('0')
  f[0] = state
  f[1] = String(ppid)
  f[11] = String(utime)
  f[12] = String(stime)
  f[13] = String(cutime)
  f[14] = String(cstime)
  f[19] = String(starttime)
  f[21] = String(rss)
  return `${pid} (${comm}) ${f.join(' ')}\n`
}

function procs (list) {
  return new Map(list.map((p) => [p.pid, parseStat(statLine(p))]))
}

test('parseStat reads ppid, the four CPU times, start time and rss by their proc(5) positions', () => {
  const real = '9783 (cat) R 9780 9780 7496 0 -1 4194304 99 0 0 0 7 3 2 1 20 0 1 0 32194 3133440 409 18446744073709551615 94421739794432 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0'
  expect(parseStat(real)).toEqual({
    pid: 9783, comm: 'cat', state: 'R', ppid: 9780, utime: 7, stime: 3, cutime: 2, cstime: 1, starttime: 32194, rssPages: 409
  })
})

test('a comm with spaces and parentheses does not shift the fields', () => {
  const p = parseStat(statLine({ pid: 42, comm: 'node (worker) ) x', ppid: 7, utime: 11, stime: 5, rss: 300 }))
  expect(p).toMatchObject({ pid: 42, comm: 'node (worker) ) x', ppid: 7, utime: 11, stime: 5, rssPages: 300 })
})

test('parseStat refuses what is not a stat line', () => {
  expect(() => parseStat('hello')).toThrow(/not a \/proc stat line/)
  expect(() => parseStat('1 (x) S 0 1 2')).toThrow(/short/)
})

test('treePids follows ppid through every generation from each root, and nothing else', () => {
  const ps = procs([
    { pid: 1, ppid: 0 },
    { pid: 100, ppid: 1 }, // the supervisor
    { pid: 101, ppid: 100 }, // a worker
    { pid: 102, ppid: 100 },
    { pid: 103, ppid: 102 }, // the worker's own child
    { pid: 200, ppid: 1 }, // nginx, a second root
    { pid: 201, ppid: 200 },
    { pid: 300, ppid: 1 } // someone else's process
  ])
  expect([...treePids(ps, [100])].sort()).toEqual([100, 101, 102, 103])
  expect([...treePids(ps, [100, 200])].sort()).toEqual([100, 101, 102, 103, 200, 201])
  expect([...treePids(ps, [999])]).toEqual([])
})

test('treeTotals adds own and reaped-children CPU and rss over the whole tree', () => {
  const ps = procs([
    { pid: 100, ppid: 1, utime: 10, stime: 5, cutime: 3, cstime: 2, rss: 1000 },
    { pid: 101, ppid: 100, utime: 40, stime: 20, rss: 2000 },
    { pid: 300, ppid: 1, utime: 999, stime: 999, rss: 99999 }
  ])
  expect(treeTotals(ps, [100])).toEqual({ ticks: 80, rssPages: 3000, processes: 2 })
})

test('a worker that exits during the run is still counted, through the parent that reaped it', () => {
  const before = treeTotals(procs([
    { pid: 100, ppid: 1, utime: 10, stime: 0 },
    { pid: 101, ppid: 100, utime: 50, stime: 10 }
  ]), [100])
  // the worker ran 30 more ticks, exited, and the supervisor waited for it (90 ticks
  // moved to its cutime + cstime); a new worker took its place and used 5
  const after = treeTotals(procs([
    { pid: 100, ppid: 1, utime: 12, stime: 0, cutime: 70, cstime: 20 },
    { pid: 102, ppid: 100, utime: 5, stime: 0 }
  ]), [100])
  expect(cpuMsBetween(before, after, 100)).toBe((2 + 30 + 5) * 10)
})

test('cpuMsBetween converts ticks with the clock rate, and is null when the tree lost ticks', () => {
  expect(cpuMsBetween({ ticks: 100 }, { ticks: 350 }, 100)).toBe(2500)
  expect(cpuMsBetween({ ticks: 100 }, { ticks: 350 }, 250)).toBe(1000)
  expect(cpuMsBetween({ ticks: 100 }, { ticks: 60 }, 100)).toBeNull()
})

test('readProcs reads every numeric entry and skips the rest', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'procstat-test-'))
  try {
    for (const [name, line] of [['10', statLine({ pid: 10, ppid: 1, utime: 4 })], ['11', statLine({ pid: 11, ppid: 10 })], ['self', statLine({ pid: 10 })]]) {
      fs.mkdirSync(path.join(dir, name))
      fs.writeFileSync(path.join(dir, name, 'stat'), line)
    }
    fs.mkdirSync(path.join(dir, '12')) // exited between readdir and read
    const ps = readProcs(dir)
    expect([...ps.keys()].sort()).toEqual([10, 11])
    expect(ps.get(10).utime).toBe(4)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('on Linux the harness finds its own process and its child in the real /proc', () => {
  if (process.platform !== 'linux') return
  const ps = readProcs()
  expect(ps.get(process.pid).ppid).toBe(process.ppid)
  expect(treePids(ps, [process.ppid]).has(process.pid)).toBe(true)
})

test('machineTicks counts every state but idle and iowait as busy; busyCoresBetween scales to the cores', () => {
  //                 user nice system idle iowait irq softirq steal guest guest_nice
  const a = machineTicks('cpu  100 0 50 800 50 0 0 0 10 0\ncpu0 1 2 3 4\n')
  expect(a).toEqual({ busy: 150, total: 1000 })
  const b = machineTicks('cpu  400 0 150 1200 50 0 0 0 10 0\n')
  expect(busyCoresBetween(a, b, 2)).toBeCloseTo(1.0)
  expect(busyCoresBetween(a, a, 2)).toBe(null)
  expect(() => machineTicks('intr 1 2 3')).toThrow(/not \/proc\/stat/)
  expect(machineTicks().total).toBeGreaterThan(0)
})
