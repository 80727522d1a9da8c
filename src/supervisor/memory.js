'use strict'

// Memory of worker processes: RSS sampled by the supervisor (so a worker busy in a GC
// storm is still measured), for `httpsys ls` and for `max_memory_restart`. One sample
// over the limit is noise (a burst, a GC not yet run); the limit must hold for
// SUSTAINED consecutive samples before the instance is reloaded, and the record says
// what was measured against what limit (docs/supervisor.md 4.4).

const fs = require('node:fs')
const { execFile } = require('node:child_process')

const SAMPLE_MS = 2000
const SUSTAINED = 3

/**
 * RSS of one worker process in bytes, or null when it cannot be read.
 * Linux: /proc; other POSIX: ps; Windows: the preload answers httpsys:stats.
 * @param {import('./worker-process').WorkerProcess} proc
 * @returns {Promise<number|null>}
 */
async function rssOf (proc) {
  const pid = proc.pid
  if (pid === undefined || proc.exitInfo) return null
  if (process.platform === 'linux') {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'latin1')
      const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
      return m ? Number(m[1]) * 1024 : null
    } catch {
      return null
    }
  }
  if (process.platform === 'win32') {
    const stats = await proc.askStats()
    return stats && typeof stats.rss === 'number' ? stats.rss : null
  }
  return new Promise((resolve) => {
    execFile('ps', ['-o', 'rss=', '-p', String(pid)], (err, stdout) => {
      const kb = Number(String(stdout).trim())
      resolve(err || !Number.isFinite(kb) || kb <= 0 ? null : kb * 1024)
    })
  })
}

/**
 * Samples every live process of the given instances; reloads an instance whose current
 * process stays above its app's max_memory_restart.
 */
class MemoryMonitor {
  /**
   * @param {object} options
   * @param {() => import('./app-group').AppGroup[]} options.groups
   * @param {import('pino').Logger} options.logger
   * @param {number} [options.intervalMs=2000]
   * @param {number} [options.sustained=3]
   * @param {(proc: object) => Promise<number|null>} [options.sample=rssOf]
   */
  constructor ({ groups, logger, intervalMs = SAMPLE_MS, sustained = SUSTAINED, sample = rssOf }) {
    this.groups = groups
    this.logger = logger
    this.intervalMs = intervalMs
    this.sustained = sustained
    this.sample = sample
    this.timer = null
    this.running = false
    this.rss = new Map() // pid -> last sample
    this.over = new Map() // pid -> consecutive samples above the limit
  }

  start () {
    if (this.timer) return
    this.timer = setInterval(() => this.tick(), this.intervalMs)
    this.timer.unref()
  }

  stop () {
    clearInterval(this.timer)
    this.timer = null
  }

  /** @returns {number|null} the last RSS sampled for pid */
  last (pid) {
    return this.rss.has(pid) ? this.rss.get(pid) : null
  }

  async tick () {
    if (this.running) return
    this.running = true
    try {
      const seen = new Set()
      for (const group of this.groups()) {
        for (const instance of group.instances) {
          for (const proc of instance.processes()) {
            seen.add(proc.pid)
            const rss = await this.sample(proc)
            if (rss === null) continue
            this.rss.set(proc.pid, rss)
            if (proc === instance.proc) this.check(group, instance, proc, rss)
          }
        }
      }
      for (const pid of this.rss.keys()) {
        if (!seen.has(pid)) {
          this.rss.delete(pid)
          this.over.delete(pid)
        }
      }
    } finally {
      this.running = false
    }
  }

  check (group, instance, proc, rss) {
    const limit = group.app.max_memory_restart
    if (!(limit > 0) || proc.state !== 'ready') return
    const n = rss > limit ? (this.over.get(proc.pid) || 0) + 1 : 0
    this.over.set(proc.pid, n)
    if (n < this.sustained) return
    this.over.set(proc.pid, 0)
    const { formatSize } = require('../config/size')
    this.logger.warn({ event: 'memory', app: group.app.name, inst: instance.inst, pid: proc.pid, rss, limit, samples: n },
      `memory ${formatSize(rss)} above max_memory_restart ${formatSize(limit)} for ${n} samples; reloading`)
    group.reloadInstance(instance, 'memory')
  }
}

module.exports = { MemoryMonitor, rssOf, SAMPLE_MS, SUSTAINED }
