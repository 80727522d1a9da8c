'use strict'

// The native router's own process in `httpsys ls`, `monit` and the metrics endpoint
// (issue 25: "its memory and CPU show in ls/monit as a row of their own"). The router
// reports its CPU time and resident memory (router/internal/procstat, the processStats
// command); this turns them into what a worker's row shows: CPU as a share of one core
// over the last minute (app-stats.js cpuPercent), memory as RSS bytes.

const { rssOf } = require('./memory')

// one sample a second, a minute of them: the window a worker's CPU is measured over
const SAMPLE_MS = 1000
const WINDOW_MS = 60000

class ProcessUsage {
  constructor ({ now = Date.now } = {}) {
    this.now = now
    this.pid = null
    this.startedAt = null
    this.samples = [] // { t, cpuMicros, rss, goroutines }, oldest first
  }

  /** The router's process was spawned now. */
  started (pid) {
    this.pid = pid
    this.startedAt = this.now()
    this.samples = []
  }

  /** Whether a new sample is due (at most one a second is kept). */
  due () {
    return !this.takenWithin(SAMPLE_MS)
  }

  /** Whether the last sample is younger than ms. */
  takenWithin (ms) {
    const last = this.samples[this.samples.length - 1]
    return last !== undefined && this.now() - last.t < ms
  }

  /** @param {{ cpuMicros: number, rss: number, goroutines?: number }} stats processStats's answer */
  add (stats) {
    const t = this.now()
    const last = this.samples[this.samples.length - 1]
    const sample = { t, cpuMicros: stats.cpuMicros, rss: stats.rss, goroutines: stats.goroutines ?? null }
    // a fresher answer within the second replaces the newest instead of crowding the window
    if (last !== undefined && t - last.t < SAMPLE_MS && this.samples.length > 1) this.samples[this.samples.length - 1] = sample
    else this.samples.push(sample)
    while (this.samples.length > 2 && t - this.samples[1].t >= WINDOW_MS) this.samples.shift()
  }

  /**
   * @param {{ exitInfo: object|null }} proc the router's RouterProcess
   * @returns {Promise<object|null>} { pid, cpu, cpuMicros (since start), memory, uptimeMs, goroutines }
   */
  async view (proc) {
    const last = this.samples[this.samples.length - 1]
    if (this.pid === null || last === undefined) return null
    // where the router cannot say (0: not Linux), the process table does, as for a worker
    const memory = last.rss > 0 ? last.rss : await rssOf({ pid: this.pid, exitInfo: proc.exitInfo, askStats: async () => null })
    return { pid: this.pid, cpu: this.cpu(), cpuMicros: last.cpuMicros, memory, uptimeMs: this.now() - this.startedAt, goroutines: last.goroutines }
  }

  /** CPU time over the window, in % of one core (over the process's life until a second of samples). */
  cpu () {
    const last = this.samples[this.samples.length - 1]
    const first = this.samples[0]
    const ms = last.t - first.t
    if (ms >= SAMPLE_MS) return round((last.cpuMicros - first.cpuMicros) / (ms * 10))
    const life = last.t - this.startedAt
    return life > 0 ? round(last.cpuMicros / (life * 10)) : null
  }
}

function round (x) {
  return Math.round(x * 10) / 10
}

module.exports = { ProcessUsage, SAMPLE_MS, WINDOW_MS }
