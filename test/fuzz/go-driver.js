'use strict'

// Drives the router's Go parser (router/internal/parse) for the fuzzer, through
// router/cmd/fuzz-driver: one Go process per batch of inputs (a process per input
// costs more than the parsing), each input under all its plans. The Go side
// (parsetest.Run) checks the parser's contract on every Parse call and records the
// events; rules.js then checks them here.
//
// The plans of fuzz.js map to the Go parser's pull API (Parse returns at every event,
// the caller calls again with the rest) as follows:
// - one buffer, random cuts, byte by byte / small pieces: the same pieces as reads;
// - pause at each onComplete: every event is a stop in Go, so it is the one-buffer
//   run itself, which records the stream offset of each Complete (the boundaries);
// - random pauses + scribbled buffers + reset(): the same pieces, each a copy that is
//   overwritten once parsed; at a random event (the pause probability) the caller
//   stops and comes back with the untaken bytes moved into a new buffer in front of
//   its next read (a connection that stopped reading, then compacted its buffer);
//   the prefix is parsed first on the same parser, then Reset().
// What has no Go equivalent: execute() while paused (there is no paused state to
// call into), handlers outside a call (there are none: events are return values),
// resume() that pauses again.

const { spawnSync } = require('node:child_process')
const { buildGo } = require('../helpers/go-build')
const { InvariantError } = require('./rules')

/** The options as the Go driver reads them (no limit is null, JSON has no Infinity). */
function goOptions (options = {}) {
  const o = {}
  if (options.maxHeaderSize !== undefined) o.maxHeaderSize = options.maxHeaderSize
  if (options.maxBodySize !== undefined) o.maxBodySize = options.maxBodySize === Infinity ? null : options.maxBodySize
  for (const k of ['strictHost', 'requireHost', 'connect', 'lenient']) if (options[k] !== undefined) o[k] = options[k]
  return o
}

function goPlan (spec, len) {
  return {
    splits: spec.splits || [[0, len]],
    scribble: !!spec.scribble,
    stop: spec.pauseProbability || 0,
    seed: spec.seed || 1,
    prefix: spec.prefix ? spec.prefix.toString('base64') : null
  }
}

/**
 * A fuzz target (see fuzz.js) on the Go parser.
 * @param {object} [o]
 * @param {string} [o.bin] a built fuzz-driver; built into a temp dir otherwise
 * @returns {{ name: string, runBatch: Function, oneBuffer: Function, timeRuns: Function, cleanup: () => void }}
 */
function goTarget ({ bin } = {}) {
  let built = null
  const driver = () => {
    if (bin) return bin
    if (built === null) built = buildGo('fuzz-driver')
    return built.bin
  }

  /** Runs job lines; a crash of the driver (a panic in the parser) is the result of the job it died on. */
  function runJobs (lines) {
    const out = []
    let from = 0
    while (from < lines.length) {
      const r = spawnSync(driver(), [], { input: lines.slice(from).join('\n') + '\n', maxBuffer: 1 << 30, encoding: 'utf8' })
      if (r.error) throw r.error
      const got = r.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))
      out.push(...got)
      from += got.length
      if (r.status === 0) {
        if (from < lines.length) throw new Error(`fuzz-driver answered ${from} of ${lines.length} inputs`)
        break
      }
      out.push({ crash: (r.stderr || `exit ${r.status} ${r.signal || ''}`).slice(0, 4000) })
      from++
    }
    return out
  }

  /**
   * @param {Array<{ input: Buffer, options: object, plans: Array<[string, object]> }>} items
   * @returns {Array<{ runs: Array<object>, ms: number } | { error: InvariantError }>}
   */
  function runBatch (items) {
    const lines = items.map(({ input, options, plans }) => JSON.stringify({
      input: input.toString('base64'),
      options: goOptions(options),
      plans: plans.map(([, spec]) => goPlan(spec, input.length))
    }))
    return runJobs(lines).map((r, k) => {
      if (r.crash) return { error: new InvariantError('exception', `the Go parser panicked: ${r.crash}`) }
      const bad = r.plans.findIndex((p) => p.violation)
      if (bad !== -1) {
        return { error: new InvariantError('contract', `plan ${items[k].plans[bad][0]}: ${r.plans[bad].violation}`) }
      }
      return { runs: r.plans.map((p, j) => ({ name: items[k].plans[j][0], known: [], ...p })), ms: r.ns / 1e6 }
    })
  }

  return {
    name: 'go',
    runBatch,
    /** The events of `buf` in one buffer, default options. */
    oneBuffer (buf) {
      const [r] = runBatch([{ input: buf, options: {}, plans: [['one-buffer', {}]] }])
      if (r.error) throw r.error
      return r.runs[0].events
    },
    /**
     * Times the parser alone (a bare Parse loop after a GC) on [{ input, splits,
     * options }], each once to warm up, then `runs` times, in one process: the best
     * time of each, in ms.
     */
    timeRuns (jobs, runs) {
      const lines = jobs.map(({ input, splits, options }) =>
        JSON.stringify({ input: input.toString('base64'), options: goOptions(options), plans: [{ splits }], time: true, repeat: runs }))
      return runJobs(lines).map((o) => {
        if (o.crash || o.plans[0].violation) throw new Error(`a scaling input broke the parser: ${o.crash || o.plans[0].violation}`)
        if ((o.plans[0].events || []).length) throw new Error('a scaling input was refused: the shape is wrong')
        return o.ns / 1e6
      })
    },
    cleanup () {
      if (built !== null) built.cleanup()
      built = null
    }
  }
}

module.exports = { goTarget, goOptions }
