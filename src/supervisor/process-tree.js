'use strict'

// Finding and killing everything an app started. Orphans holding the port after a stop
// are the most reported supervisor bug (docs/supervisor.md 3.3): kills that
// miss grandchildren, detached children, no tree kill on Windows.
//
// POSIX: the worker leads its own process group, so one kill(-pgid) reaches every
// descendant that did not leave the group. Descendants that did (setsid, detached
// spawns) are found by walking parent links while the worker is still alive: once it is
// gone they are re-parented to init and no longer findable. Each pid is kept with its
// start time, so a pid reused by an unrelated process is never killed.
// Windows: `taskkill /T /F` walks the tree; libuv's job object already kills direct
// children when the supervisor dies (docs/supervisor.md 3.3). A job object of our own
// is for the native addon.

const fs = require('node:fs')
const { execFile } = require('node:child_process')
const { pidAlive } = require('../local-socket')

const IS_WINDOWS = process.platform === 'win32'
const HAS_PROC = process.platform === 'linux' && fs.existsSync('/proc/self/stat')
// how often a TreeWatch reads the process table (as often as memory is sampled)
const WATCH_MS = 2000

/**
 * @typedef {{ pid: number, start: string|null, pgid?: number }} ProcessId a pid and its start time (where known)
 */

/**
 * The processes of a tree: the root's descendants by parent link and its process group.
 * @param {number} rootPid
 * @returns {Promise<ProcessId[]>} not including the root itself
 */
async function snapshot (rootPid) {
  if (IS_WINDOWS) return []
  return treeOf(await readTable(), rootPid)
}

function readTable () {
  return HAS_PROC ? readProc() : readPs()
}

function treeOf (table, rootPid) {
  const children = new Map()
  for (const p of table) {
    if (!children.has(p.ppid)) children.set(p.ppid, [])
    children.get(p.ppid).push(p)
  }
  const found = new Map()
  const stack = [rootPid]
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()) || []) {
      if (found.has(child.pid)) continue
      found.set(child.pid, child)
      stack.push(child.pid)
    }
  }
  for (const p of table) if (p.pgid === rootPid && p.pid !== rootPid) found.set(p.pid, p)
  return [...found.values()].map((p) => ({ pid: p.pid, start: p.start, pgid: p.pgid }))
}

/**
 * The last known tree of each watched root, refreshed for all roots together from one
 * read of the process table (every intervalMs, and on demand). A process exits without
 * warning (a crash): by then its detached children are re-parented to init and only an
 * earlier look can name them.
 */
class TreeWatch {
  constructor ({ intervalMs = WATCH_MS } = {}) {
    this.intervalMs = intervalMs
    this.roots = new Map() // root pid -> ProcessId[]
    this.timer = null
    this.pending = null
  }

  add (pid) {
    if (IS_WINDOWS || pid === undefined) return
    this.roots.set(pid, [])
    if (this.timer === null) {
      this.timer = setInterval(() => this.refresh(), this.intervalMs)
      this.timer.unref()
    }
  }

  /** @returns {ProcessId[]} what was last seen of the tree of pid; it is no longer watched */
  remove (pid) {
    const ids = this.roots.get(pid) || []
    this.roots.delete(pid)
    if (this.roots.size === 0 && this.timer !== null) {
      clearInterval(this.timer)
      this.timer = null
    }
    return ids
  }

  known (pid) {
    return this.roots.get(pid) || []
  }

  /** @returns {Promise<void>} once every watched tree has been read again */
  refresh () {
    if (this.pending === null) {
      this.pending = this.read().finally(() => { this.pending = null })
    }
    return this.pending
  }

  async read () {
    if (this.roots.size === 0) return
    const table = await readTable()
    const byPid = new Map(table.map((p) => [p.pid, p]))
    for (const [root, before] of this.roots) {
      const fresh = treeOf(table, root)
      const seen = new Set(fresh.map((p) => p.pid))
      // seen before and still the same process: a setsid'd grandchild whose parent has
      // exited is linked to the root no more, and is still the app's
      for (const id of before) {
        const now = byPid.get(id.pid)
        if (seen.has(id.pid) || !now || now.state === 'Z' || (id.start !== null && now.start !== id.start)) continue
        fresh.push(id)
      }
      if (this.roots.has(root)) this.roots.set(root, fresh)
    }
  }
}

let sharedWatch = null
/** The watch every worker process of this supervisor shares (one table read per interval). */
function defaultWatch () {
  if (sharedWatch === null) sharedWatch = new TreeWatch()
  return sharedWatch
}

/**
 * Those of `ids` still running (zombies count as gone: they hold nothing but a pid).
 * @param {ProcessId[]} ids
 * @returns {ProcessId[]}
 */
function survivors (ids) {
  return ids.filter((id) => isAlive(id))
}

/** @param {ProcessId} id */
function isAlive ({ pid, start }) {
  if (HAS_PROC) {
    const p = readStat(pid)
    return p !== null && p.state !== 'Z' && (start === null || p.start === start)
  }
  return pidAlive(pid)
}

/** SIGKILL each of `ids` that is still the process we saw. */
function killAll (ids) {
  for (const id of ids) {
    if (!isAlive(id)) continue
    try { process.kill(id.pid, 'SIGKILL') } catch {}
  }
}

/**
 * Kills the root and everything in its process group (POSIX), or its whole tree
 * (Windows, taskkill /T /F: the only tree kill there until the addon has a job object).
 * @param {number} pid the root, a process group leader on POSIX
 * @returns {Promise<void>}
 */
function killTree (pid) {
  if (IS_WINDOWS) {
    return new Promise((resolve) => {
      execFile('taskkill', ['/pid', String(pid), '/T', '/F'], { windowsHide: true }, (err) => {
        // taskkill failed (not found, or a taskkill without /T such as Wine 8's): the root
        // at least. Not after a success: the pid is free then and may be reused at once.
        if (err) {
          try { process.kill(pid, 'SIGKILL') } catch {}
        }
        resolve()
      })
    })
  }
  try {
    process.kill(-pid, 'SIGKILL')
  } catch (err) {
    // ESRCH: the group is empty already. Anything else (EPERM for a group of zombies on
    // macOS): the process itself at least.
    if (err.code !== 'ESRCH') {
      try { process.kill(pid, 'SIGKILL') } catch {}
    }
  }
  return Promise.resolve()
}

/** Whether anything is left in the process group led by pid (POSIX). */
function groupAlive (pid) {
  if (IS_WINDOWS) return false
  if (HAS_PROC) return readProc().some((p) => p.pgid === pid && p.state !== 'Z')
  try {
    process.kill(-pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

function readProc () {
  const out = []
  let names
  try {
    names = fs.readdirSync('/proc')
  } catch {
    return out
  }
  for (const name of names) {
    const c = name.charCodeAt(0)
    if (c < 48 || c > 57) continue
    const p = readStat(Number(name))
    if (p !== null) out.push(p)
  }
  return out
}

// /proc/<pid>/stat: "pid (comm) state ppid pgrp ... starttime(22) ..."; comm may hold
// spaces and parentheses, so the fields are counted from the last ')'.
function readStat (pid) {
  let text
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return null
  }
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { pid, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]), start: rest[19] }
}

function readPs () {
  return new Promise((resolve) => {
    execFile('ps', ['-A', '-o', 'pid=,ppid=,pgid='], { windowsHide: true }, (err, stdout) => {
      if (err) return resolve([])
      const out = []
      for (const line of stdout.split('\n')) {
        const [pid, ppid, pgid] = line.trim().split(/\s+/).map(Number)
        if (Number.isInteger(pid)) out.push({ pid, ppid, pgid, state: '', start: null })
      }
      resolve(out)
    })
  })
}

module.exports = { snapshot, survivors, killAll, killTree, groupAlive, isAlive, TreeWatch, defaultWatch }
