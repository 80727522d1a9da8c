'use strict'

// Who listens on a TCP port, so ERR_HTTPSYS_PORT_IN_USE can name the owner instead of
// leaving the user to run `ss -ltnp`. Linux only, best effort: the listening socket's
// inode from /proc/net/tcp{,6}, then the process holding that inode among /proc/*/fd.
// Other users' processes are not readable without privileges; then no owner is named.

const fs = require('node:fs')

// The error path must stay fast even on a host with many processes.
const BUDGET_MS = 300
const LISTEN = '0A'

/**
 * @param {number} port
 * @returns {string|undefined} e.g. 'pid 4242 (nginx)'
 */
function findPortOwner (port) {
  if (process.platform !== 'linux') return undefined
  try {
    const inodes = listeningInodes(port)
    if (inodes.size === 0) return undefined
    return processHolding(inodes)
  } catch {
    return undefined
  }
}

function listeningInodes (port) {
  const inodes = new Set()
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text
    try {
      text = fs.readFileSync(file, 'latin1')
    } catch {
      continue
    }
    const lines = text.split('\n')
    for (let i = 1; i < lines.length; i++) {
      const cols = lines[i].trim().split(/\s+/)
      if (cols.length < 10 || cols[3] !== LISTEN) continue
      const local = cols[1]
      if (parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && cols[9] !== '0') inodes.add(cols[9])
    }
  }
  return inodes
}

function processHolding (inodes) {
  const wanted = new Set([...inodes].map((inode) => `socket:[${inode}]`))
  const deadline = Date.now() + BUDGET_MS
  const pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  // Our own process first: a port we hold ourselves is the common case in tests.
  pids.sort((a, b) => (b === String(process.pid)) - (a === String(process.pid)))
  for (const pid of pids) {
    if (Date.now() > deadline) return undefined
    let fds
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      let link
      try {
        link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`)
      } catch {
        continue
      }
      if (wanted.has(link)) return owner(pid)
    }
  }
  return undefined
}

// The native router holds the ports of the process that started it (a supervisor, or
// a standalone app through the preload): the owner a user can act on is that parent.
function owner (pid) {
  if (comm(pid) === 'httpsys-router') {
    const parent = parentOf(pid)
    if (parent !== undefined) return `pid ${parent} (${describe(parent)})`
  }
  return `pid ${pid} (${describe(pid)})`
}

function parentOf (pid) {
  try {
    // the command name is in parentheses and may hold spaces: the fields follow its ')'
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1')
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    return Number.isInteger(ppid) && ppid > 1 ? String(ppid) : undefined
  } catch {
    return undefined
  }
}

function isSupervisor (pid) {
  try {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
    return args.slice(1, 3).some((a) => /(^|[\\/])httpsys(\.js|\.exe|\.cmd)?$/.test(a))
  } catch {
    return false
  }
}

// An httpsys supervisor is a node process running bin/httpsys: named as such (with its
// folder), so the error can say what to do about it (one config for both apps).
function describe (pid) {
  try {
    if (isSupervisor(pid)) {
      let where = ''
      try {
        where = ` in ${fs.readlinkSync(`/proc/${pid}/cwd`)}`
      } catch {}
      return `httpsys supervisor${where}`
    }
  } catch {}
  return comm(pid)
}

function comm (pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || 'unknown'
  } catch {
    return 'unknown'
  }
}

/**
 * A port in use with who holds it, where the error does not say (the native router
 * leaves it to the process that started it: only a local process can read /proc).
 * @param {Error} err any error; only ERR_HTTPSYS_PORT_IN_USE without an owner changes
 * @returns {Error} err, or the same error naming the holder
 */
function withPortOwner (err) {
  if (err.code !== 'ERR_HTTPSYS_PORT_IN_USE' || err.owner !== undefined || !Number.isInteger(err.port)) return err
  const owner = findPortOwner(err.port)
  if (owner === undefined) return err
  const { codes } = require('./errors')
  return new codes.ERR_HTTPSYS_PORT_IN_USE({ port: err.port, host: err.host, owner })
}

module.exports = { findPortOwner, withPortOwner }
