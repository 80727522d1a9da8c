'use strict'

// The fuzz loop: input i of seed S is generate(new Rng(S, i)), so `--seed S --only i`
// replays exactly one input. Every input is parsed under several plans (one buffer;
// one buffer pausing at each onComplete; random cuts; byte by byte or small pieces;
// random pieces with random pauses, scribbled buffers and a reset() parser) and every
// plan must give the same events; the driver checks the parser's contract on each call.
// Inputs parsed with the default options also go through the differential run against
// llhttp (differential.js). A failure throws a FuzzFailure carrying the seed, the index,
// the input and a minimized input.

const { Rng } = require('./rng')
const { generate } = require('./mutate')
const { runHub, Splits, InvariantError } = require('./hub-driver')
const differential = require('./differential')
const { KNOWN_BUGS } = require('./known-bugs')

class FuzzFailure extends Error {
  constructor ({ seed, index, kind, message, plan, input, minimized, details }) {
    super(`${kind}: ${message}\n` +
      `  seed ${seed}, input ${index}${plan ? `, plan ${plan}` : ''} (replay: npm run fuzz -- --seed ${seed} --only ${index})\n` +
      `  input (${input.length} bytes): ${show(input)}\n` +
      (minimized ? `  minimized (${minimized.length} bytes): ${show(minimized)}\n` : '') +
      (details ? `  details: ${JSON.stringify(details).slice(0, 2000)}\n` : ''))
    this.kind = kind
    this.seed = seed
    this.index = index
    this.input = input
    this.minimized = minimized
  }
}

/** An input as a JS string literal (latin1), cut in the middle when long. */
function show (buf, max = 600) {
  const s = JSON.stringify(buf.latin1Slice(0, buf.length))
  return s.length <= max ? s : `${s.slice(0, max / 2)} ...(${buf.length} bytes)... ${s.slice(-max / 2)}`
}

function optionsFor (rng) {
  if (rng.chance(0.85)) return {}
  const options = {
    maxHeaderSize: rng.pick([40, 64, 128, 256, 1024, 16384]),
    maxBodySize: rng.pick([0, 1, 10, 100, 4096, Infinity])
  }
  // a server that owns its port: Host and authority as sent (client-connection.js)
  if (rng.chance(0.2)) options.strictHost = false
  return options
}

/**
 * Parses one input under every plan; throws an InvariantError on a broken contract or a
 * plan giving different events. Deterministic in (input, planSeed, options).
 * @returns {{ events: Array, boundaries: number[] }} the one-buffer run
 */
function checkHub (input, planSeed, options) {
  const rng = new Rng(planSeed, 3)
  const len = input.length
  const canonical = runHub(input, { splits: Splits.whole(len), options })
  const byComplete = runHub(input, { splits: Splits.whole(len), options, pauseOnComplete: true })
  const known = [...canonical.known]
  const notes = []
  const ctx = { input, options, canonical, boundaries: byComplete.boundaries, known, notes }
  same(ctx, byComplete, { splits: Splits.whole(len), options, pauseOnComplete: true }, 'pause-at-complete')
  const completes = canonical.events.filter((e) => e[0] === 'complete').length
  if (byComplete.boundaries.length !== completes) {
    throw new InvariantError('boundaries', `${completes} messages but ${byComplete.boundaries.length} pauses at onComplete`)
  }
  if (!canonical.errored) {
    // finish() said "between requests": nothing but empty lines may follow the last message
    const last = byComplete.boundaries.length ? byComplete.boundaries[byComplete.boundaries.length - 1] : 0
    if (!/^(?:\r\n)*\r?$/.test(input.latin1Slice(last, len))) {
      throw new InvariantError('finish', 'finish() returned null with a partial request after the last message', { tail: input.latin1Slice(last, len) })
    }
  }
  const plans = [
    ['random-cuts', { splits: Splits.cuts(len, rng, rng.range(1, 4)), options }],
    [len <= 4096 ? 'byte-by-byte' : 'small-pieces', { splits: len <= 4096 ? Splits.bytes(len) : Splits.random(len, rng, 97), options }]
  ]
  const prefix = rng.chance(0.5) ? generate(rng).input.subarray(0, rng.int(300)) : undefined
  plans.push(['pauses+scribble+reset', {
    splits: Splits.random(len, rng, Math.max(1, len >> rng.range(0, 4))),
    options,
    pauseProbability: 0.35,
    scribble: true,
    prefix,
    seed: rng.u32()
  }])
  for (const [name, plan] of plans) same(ctx, runHub(input, plan), plan, name)
  return { events: canonical.events, boundaries: byComplete.boundaries, known, notes }
}

const json = (x) => JSON.stringify(x)
// what must not depend on the chunking: events, with errors compared by status (the
// reason is a diagnostic: a cut line may be refused by an earlier check)
const verdictKey = (e) => e === undefined ? '' : e[0] === 'error' ? json([e[0], e[1]]) : json(e)
const sameVerdicts = (x, y) => x.length === y.length && x.every((e, k) => verdictKey(e) === verdictKey(y[k]))

/**
 * Plans must give the events of the one-buffer run, with one allowance: the parser reads
 * a line cut by a buffer boundary only once its LF has arrived (except short request
 * lines), so an error in a line the input never ends is reported by onError in one
 * buffer, but only by finish() (400) when the line was cut. That case must then give
 * the one-buffer error as soon as an LF follows. Differences explained by a known bug
 * (known-bugs.js) are counted in ctx.known instead of failing.
 */
function same (ctx, b, plan, name) {
  const why = difference(ctx.input, ctx.canonical, b, plan, ctx.boundaries)
  if (why === null) return
  if (why.note) ctx.notes.push(why.note)
  else if (why.known) ctx.known.push(why.known)
  else throw new InvariantError('chunking', `plan ${name} gave different events than one buffer`, why.details)
}

/** null: same events; { note } or { known }: an allowed difference; { details }: a failure. */
function difference (input, a, b, plan, boundaries) {
  if (json(a.events) === json(b.events)) return null
  let i = 0
  while (i < a.events.length && verdictKey(a.events[i]) === verdictKey(b.events[i])) i++
  if (i === a.events.length && a.events.length === b.events.length) return { note: 'error-reason-depends-on-chunking' }
  const late = a.events[i] && a.events[i][0] === 'error' && i === b.events.length - 1 &&
    json(b.events[i]) === '["finish",400]' && input.indexOf(10, a.errorAt) === -1
  if (late) {
    const withLf = Buffer.concat([input, Buffer.from('\n')])
    const splits = [...plan.splits.filter(([s, e]) => e > s), [input.length, input.length + 1]]
    const again = runHub(withLf, { ...plan, splits, pauseOnComplete: false })
    const ref = runHub(withLf, { splits: Splits.whole(withLf.length), options: plan.options })
    if (sameVerdicts(ref.events.slice(0, i + 1), a.events.slice(0, i + 1))) {
      const then = difference(withLf, ref, again, plan, boundaries)
      if (then === null) return { note: 'error-found-when-the-line-ends' }
      if (!then.details) return then
    }
  }
  const done = a.events.slice(0, i).filter((e) => e[0] === 'complete').length
  const messageStart = done === 0 ? 0 : boundaries[done - 1]
  const bug = KNOWN_BUGS.find((k) => k.matches({ input, options: plan.options || {}, oneBuffer: a, plan: b, at: i, messageStart }))
  if (bug) return { known: bug.id }
  return { details: { at: i, oneBuffer: a.events.slice(i, i + 2), plan: b.events.slice(i, i + 2) } }
}

/** Shrinks `input` while `stillFails(candidate)` holds (range deletions, then byte simplification), within a time limit. */
function minimize (input, stillFails, ms = 3000) {
  const until = Date.now() + ms
  let cur = input
  for (let size = Math.max(1, cur.length >> 1); size >= 1 && Date.now() < until; size = size === 1 ? 0 : Math.max(1, size >> 1)) {
    for (let at = 0; at + size <= cur.length && Date.now() < until;) {
      const cand = Buffer.concat([cur.subarray(0, at), cur.subarray(at + size)])
      if (stillFails(cand)) cur = cand
      else at += size
    }
  }
  for (let i = 0; i < cur.length && Date.now() < until; i++) {
    if (cur[i] === 0x61) continue
    const cand = Buffer.from(cur)
    cand[i] = 0x61
    if (stillFails(cand)) cur = cand
  }
  return cur
}

const kindOf = (fn) => {
  try {
    fn()
    return null
  } catch (err) {
    return err instanceof InvariantError ? err.kind : 'unexpected'
  }
}

/**
 * Runs `iterations` inputs of `seed` (or only input `only`).
 * @param {object} o
 * @param {number} o.seed
 * @param {number} [o.iterations=1000]
 * @param {number} [o.start=0] first input index
 * @param {number} [o.only] run just this index
 * @param {number} [o.differentialEvery=1] differential on every n-th input (0: never)
 * @param {number} [o.budgetMs] per input time limit for all plans; default 200 ms + 20 us per byte
 * @param {boolean} [o.minimize=true]
 * @param {number} [o.until] stop before this Date.now() value, whatever `iterations` says
 * @param {(summary) => void} [o.onProgress]
 * @returns {object} summary: inputs, bytes, requests accepted, endings, error reasons, known bugs,
 *   allowed chunking differences (notes), differential categories, slowest input, time
 */
function fuzz ({ seed, iterations = 1000, start = 0, only, differentialEvery = 1, budgetMs, minimize: shrink = true, until, onProgress }) {
  const summary = {
    seed,
    inputs: 0,
    bytes: 0,
    next: start,
    accepted: 0, // requests
    endings: {}, // per input: 'clean end', 'rejected <status>', 'cut short (finish() 400)'
    reasons: {},
    knownBugs: {},
    notes: {},
    differential: differential.emptySummary(),
    slowest: { ms: 0, index: -1, bytes: 0 },
    ms: 0
  }
  const t0 = Date.now()
  const from = only !== undefined ? only : start
  const to = only !== undefined ? only + 1 : start + iterations
  for (let index = from; index < to; index++) {
    if (until !== undefined && (index & 63) === 0 && Date.now() > until) break
    const rng = new Rng(seed, index)
    const { input } = generate(rng)
    const options = optionsFor(rng)
    const planSeed = rng.u32()
    const began = process.hrtime.bigint()
    let result
    try {
      result = checkHub(input, planSeed, options)
    } catch (err) {
      const kind = err instanceof InvariantError ? err.kind : 'unexpected'
      const minimized = shrink ? minimize(input, (c) => kindOf(() => checkHub(c, planSeed, options)) === kind) : null
      throw new FuzzFailure({ seed, index, kind, message: err.message, input, minimized, details: err.details })
    }
    const ms = Number(process.hrtime.bigint() - began) / 1e6
    const limit = budgetMs ?? 200 + input.length * 0.02
    if (ms > limit) {
      // measured again, to tell a GC pause or a busy machine from a slow input
      const again = process.hrtime.bigint()
      checkHub(input, planSeed, options)
      const ms2 = Number(process.hrtime.bigint() - again) / 1e6
      if (ms2 > limit) {
        throw new FuzzFailure({ seed, index, kind: 'slow', message: `all plans took ${ms.toFixed(0)} ms then ${ms2.toFixed(0)} ms (limit ${limit.toFixed(0)} ms)`, input })
      }
    }
    if (ms > summary.slowest.ms) summary.slowest = { ms: Math.round(ms * 10) / 10, index, bytes: input.length }
    count(summary, result.events)
    for (const id of new Set(result.known)) summary.knownBugs[id] = (summary.knownBugs[id] || 0) + 1
    for (const id of new Set(result.notes)) summary.notes[id] = (summary.notes[id] || 0) + 1
    if (differentialEvery > 0 && index % differentialEvery === 0 && Object.keys(options).length === 0 && differential.available) {
      const d = differential.compare(input, result.events, result.boundaries)
      differential.record(summary.differential, d, input, index)
      if (d.kind !== null && d.category === null) {
        const minimized = shrink
          ? minimize(input, (c) => {
            try {
              const r = checkHub(c, planSeed, options)
              const dc = differential.compare(c, r.events, r.boundaries)
              return dc.category === null && dc.kind === d.kind
            } catch {
              return false
            }
          })
          : null
        throw new FuzzFailure({ seed, index, kind: 'differential', message: `unexplained disagreement with llhttp (${d.kind}): ${d.detail}`, input, minimized, details: d.info })
      }
    }
    summary.inputs++
    summary.next = index + 1
    summary.bytes += input.length
    if (onProgress && summary.inputs % 10000 === 0) onProgress(summary)
  }
  summary.ms = Date.now() - t0
  return summary
}

// Per input: the requests it accepted, then how the stream ended (one terminal verdict).
function count (summary, events) {
  let end = 'clean end'
  for (const e of events) {
    if (e[0] === 'complete') summary.accepted++
    else if (e[0] === 'error') {
      end = `rejected ${e[1]}`
      summary.reasons[e[2]] = (summary.reasons[e[2]] || 0) + 1
    } else if (e[0] === 'finish' && e[1] !== null) end = 'cut short (finish() 400)'
  }
  summary.endings[end] = (summary.endings[end] || 0) + 1
}

module.exports = { fuzz, checkHub, minimize, optionsFor, FuzzFailure, show }
