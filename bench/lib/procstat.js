'use strict'

// CPU time and memory of a whole process tree, from /proc. A target is measured as
// every process under its roots (the supervisor with its router and workers, a cluster
// primary with its workers, nginx with its workers plus the node processes behind it),
// so moving work into another process cannot hide its cost.
//
// A process counts utime + stime (its own CPU) plus cutime + cstime (the CPU of the
// children it has reaped): a worker that exits during a run still counts, through the
// parent that waited for it, and the sum over a tree before and after gives the CPU
// the tree used in between.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')

// after the ')' that closes comm: field 3 (state) is index 0 (proc(5) numbers from 1)
const F = { ppid: 1, utime: 11, stime: 12, cutime: 13, cstime: 14, starttime: 19, rss: 21 }

/**
 * One /proc/<pid>/stat line. comm is cut at the last ')', since a process may name
 * itself with spaces and parentheses ("node (worker) x").
 */
function parseStat (text) {
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  if (open < 0 || close < open) throw new Error(`not a /proc stat line: ${JSON.stringify(text.slice(0, 80))}`)
  const f = text.slice(close + 2).trim().split(' ')
  if (f.length <= F.rss) throw new Error(`short /proc stat line: ${f.length + 2} fields`)
  const n = (i) => Number(f[i])
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: f[0],
    ppid: n(F.ppid),
    utime: n(F.utime),
    stime: n(F.stime),
    cutime: n(F.cutime),
    cstime: n(F.cstime),
    starttime: n(F.starttime),
    rssPages: n(F.rss)
  }
}

/** Every process readable now, by pid. Processes that exit while being read are skipped. */
function readProcs (procDir = '/proc') {
  const procs = new Map()
  for (const name of fs.readdirSync(procDir)) {
    if (!/^\d+$/.test(name)) continue
    let text
    try {
      text = fs.readFileSync(`${procDir}/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    const p = parseStat(text)
    procs.set(p.pid, p)
  }
  return procs
}

/** The pids of roots and all their descendants present in procs. */
function treePids (procs, roots) {
  const children = new Map()
  for (const p of procs.values()) {
    if (!children.has(p.ppid)) children.set(p.ppid, [])
    children.get(p.ppid).push(p.pid)
  }
  const seen = new Set()
  const stack = roots.filter((pid) => procs.has(pid))
  while (stack.length > 0) {
    const pid = stack.pop()
    if (seen.has(pid)) continue
    seen.add(pid)
    for (const c of children.get(pid) || []) stack.push(c)
  }
  return seen
}

/** CPU ticks (own plus reaped children's) and resident pages summed over the tree. */
function treeTotals (procs, roots) {
  let ticks = 0
  let rssPages = 0
  const pids = treePids(procs, roots)
  for (const pid of pids) {
    const p = procs.get(pid)
    ticks += p.utime + p.stime + p.cutime + p.cstime
    // a zombie's rss is 0, so a process on its way out adds nothing
    rssPages += p.rssPages
  }
  return { ticks, rssPages, processes: pids.size }
}

/**
 * The tree's ticks and resident pages by role: classify(pid, proc) names each process's
 * role (the router, the workers, the supervisor...), so a server's cost shows where it
 * is spent as well as in total. A role no process had is absent.
 */
function roleTotals (procs, roots, classify) {
  const roles = {}
  for (const pid of treePids(procs, roots)) {
    const p = procs.get(pid)
    const role = classify(pid, p)
    const r = roles[role] || (roles[role] = { ticks: 0, rssPages: 0, processes: 0 })
    r.ticks += p.utime + p.stime + p.cutime + p.cstime
    r.rssPages += p.rssPages
    r.processes++
  }
  return roles
}

/** A process's command line as its argv joined by spaces ('' once it has exited). */
function cmdline (pid, procDir = '/proc') {
  try {
    return fs.readFileSync(`${procDir}/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').split('\0').join(' ')
  } catch {
    return ''
  }
}

/**
 * CPU milliseconds the tree used between two treeTotals(), or null when the tree lost
 * ticks: a process left it without being reaped inside it (its parent died first and
 * init took it), so the difference would understate the cost.
 */
function cpuMsBetween (before, after, clkTck) {
  const ticks = after.ticks - before.ticks
  return ticks < 0 ? null : ticks * 1000 / clkTck
}

/**
 * The machine's CPU time from /proc/stat's first line, in ticks: busy (every state but
 * idle and iowait) and total. Between two readings it says how much of the machine a
 * run used, the load generator included, so a run where the cores were all busy shows
 * as one (a ratio measured there is bounded by the machine, not by either server).
 * @param {string} [text] the contents of /proc/stat (read when omitted)
 */
function machineTicks (text) {
  const line = (text === undefined ? fs.readFileSync('/proc/stat', 'utf8') : text).split('\n', 1)[0]
  const f = line.trim().split(/\s+/)
  if (f[0] !== 'cpu') throw new Error(`not /proc/stat: ${JSON.stringify(line.slice(0, 40))}`)
  // user nice system idle iowait irq softirq steal (guest time is inside user already)
  const n = f.slice(1, 9).map(Number)
  const total = n.reduce((a, b) => a + b, 0)
  return { busy: total - n[3] - n[4], total }
}

/** Busy cores between two machineTicks() readings (0..cores), null without ticks. */
function busyCoresBetween (before, after, cores) {
  const total = after.total - before.total
  return total > 0 ? ((after.busy - before.busy) / total) * cores : null
}

function getconf (name, fallback) {
  try {
    const v = Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim())
    return v > 0 ? v : fallback
  } catch {
    return fallback
  }
}

let system = null
/** USER_HZ (the unit of the stat times) and the page size (the unit of rss). */
function systemUnits () {
  if (!system) system = { clkTck: getconf('CLK_TCK', 100), pageSize: getconf('PAGESIZE', 4096) }
  return system
}

module.exports = { parseStat, readProcs, treePids, treeTotals, roleTotals, cmdline, cpuMsBetween, machineTicks, busyCoresBetween, systemUnits }
