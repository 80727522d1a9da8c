'use strict'

// The fuzz loop: input i of seed S is generate(new Rng(S, i)), so `--seed S --only i`
// replays exactly one input. Every input is parsed under several plans (one buffer;
// one buffer pausing at each onComplete; random cuts; byte by byte or small pieces;
// random pieces with random pauses, scribbled buffers and a reset() parser) and every
// plan must give the same events; the driver checks the parser's contract on each
// call, rules.js the events. The parser is a target: the router's Go parser
// (go-driver.js; the JS hub's parser and its driver went with src/hub, issue 25).
// Inputs parsed with the default options also go through the differential run against
// llhttp (differential.js). A failure throws a FuzzFailure carrying the seed, the index,
// the input and a minimized input.

const { Rng } = require('./rng')
const { generate } = require('./mutate')
const { Splits, InvariantError, checkEvents } = require('./rules')
const { goTarget } = require('./go-driver')
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
  // a port a standalone server owns (router/internal/conn):
  // node's rules, Host and authority as sent, CONNECT served, node's insecureHTTPParser
  // when the server asked for it
  if (rng.chance(0.5)) {
    Object.assign(options, { requireHost: false, strictHost: false, connect: true })
    if (rng.chance(0.5)) options.lenient = true
  }
  return options
}

/**
 * The plans of one input, drawn from planSeed: [name, spec], the reference (one
 * buffer) first. A spec has the pieces (`splits`) and, for some plans, `pauseOnComplete`,
 * `pauseProbability`, `scribble`, `prefix` (parsed first, then reset()) and `seed`;
 * each target maps them to its parser's API (go-driver.js).
 */
function plansFor (input, planSeed, options, target) {
  const rng = new Rng(planSeed, 3)
  const len = input.length
  const plans = [
    ['one-buffer', { splits: Splits.whole(len), options }],
    ['pause-at-complete', { splits: Splits.whole(len), options, pauseOnComplete: true }],
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
  // the Go parser stops at every event: its one-buffer run is the pause at each complete
  return target.pausesAtComplete ? plans : plans.filter(([name]) => name !== 'pause-at-complete')
}

/**
 * Parses one input under every plan (one target process) and checks the runs.
 * @returns {{ events: Array, boundaries: number[], known: string[], notes: string[], ms: number }}
 */
function checkInput (target, input, planSeed, options) {
  const plans = plansFor(input, planSeed, options, target)
  const [res] = target.runBatch([{ input, options, plans }])
  return verify(target, input, options, plans, res)
}

/** checkInput on several inputs ({ input, planSeed, options }) in one target call. */
function checkInputs (target, inputs) {
  const items = inputs.map(({ input, planSeed, options }) => ({ input, options, plans: plansFor(input, planSeed, options, target) }))
  return target.runBatch(items).map((res, k) => verify(target, items[k].input, items[k].options, items[k].plans, res))
}

/**
 * Checks the runs of one input: throws an InvariantError on a broken contract or a
 * plan giving different events. Deterministic in (input, planSeed, options).
 */
function verify (target, input, options, plans, res) {
  if (res.error) throw res.error
  const len = input.length
  const runs = res.runs
  const canonical = runs[0]
  const byComplete = runs.find((r) => r.name === 'pause-at-complete') || canonical
  const known = [...canonical.known]
  const notes = []
  checkEvents(canonical.events, options || {}, known)
  const ctx = { target, input, options, canonical, boundaries: byComplete.boundaries, known, notes }
  if (byComplete !== canonical) same(ctx, byComplete, plans[1][1], 'pause-at-complete')
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
  for (let k = 1; k < runs.length; k++) {
    const run = runs[k]
    if (run === byComplete) continue
    same(ctx, run, plans[k][1], plans[k][0])
    // a target that records where every message ended (the Go driver) must find the
    // same ends under every plan that gives the same events
    if (run.boundaries.length && json(run.events) === json(canonical.events) && json(run.boundaries) !== json(byComplete.boundaries)) {
      throw new InvariantError('boundaries', `plan ${plans[k][0]} ends the messages at ${run.boundaries}, one buffer at ${byComplete.boundaries}`)
    }
  }
  return { events: canonical.events, boundaries: byComplete.boundaries, known, notes, ms: res.ms }
}

const json = (x) => JSON.stringify(x)
// what must not depend on the chunking: events, with errors compared by status (the
// reason is a diagnostic: a cut request line may be refused by an earlier check)
const verdictKey = (e) => e === undefined ? '' : e[0] === 'error' ? json([e[0], e[1]]) : json(e)
const sameVerdicts = (x, y) => x.length === y.length && x.every((e, k) => verdictKey(e) === verdictKey(y[k]))

/**
 * Plans must give the events of the one-buffer run, with one allowance: the parser reads
 * a line cut by a buffer boundary only once its LF has arrived (except short request
 * lines), so an error in a line the input never ends is reported at once in one
 * buffer, but only by finish() (400) when the line was cut. That case must then give
 * the one-buffer error as soon as an LF follows. Differences explained by a known bug
 * (known-bugs.js) are counted in ctx.known instead of failing.
 */
function same (ctx, b, plan, name) {
  const why = difference(ctx.target, ctx.input, ctx.canonical, b, plan, ctx.boundaries)
  if (why === null) return
  if (why.note) ctx.notes.push(why.note)
  else if (why.known) ctx.known.push(why.known)
  else throw new InvariantError('chunking', `plan ${name} gave different events than one buffer`, why.details)
}

/** null: same events; { note } or { known }: an allowed difference; { details }: a failure. */
function difference (target, input, a, b, plan, boundaries) {
  if (json(a.events) === json(b.events)) return null
  let i = 0
  while (i < a.events.length && verdictKey(a.events[i]) === verdictKey(b.events[i])) i++
  if (i === a.events.length && a.events.length === b.events.length) return { note: 'error-reason-depends-on-chunking' }
  const late = a.events[i] && a.events[i][0] === 'error' && i === b.events.length - 1 &&
    json(b.events[i]) === '["finish",400]' && input.indexOf(10, a.errorAt) === -1
  if (late) {
    const withLf = Buffer.concat([input, Buffer.from('\n')])
    let ref = b.late && b.late.ref
    let again = b.late && b.late.again
    if (!again) {
      // the Go driver runs these itself for the plans that may need them; this is the rest
      const splits = [...plan.splits.filter(([s, e]) => e > s), [input.length, input.length + 1]]
      const [r] = target.runBatch([{
        input: withLf,
        options: plan.options,
        plans: [['one-buffer', { splits: Splits.whole(withLf.length), options: plan.options }], ['again', { ...plan, splits, pauseOnComplete: false }]]
      }])
      if (r.error) throw r.error
      ;[ref, again] = r.runs
    }
    if (sameVerdicts(ref.events.slice(0, i + 1), a.events.slice(0, i + 1))) {
      const then = difference(target, withLf, ref, again, plan, boundaries)
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
 * @param {object} [o.target] the parser: go-driver.js's goTarget() (the default, one per
 *   process)
 * @param {number} [o.batch=200] inputs per call into the target (one Go process)
 * @returns {object} summary: inputs, bytes, requests accepted, endings, error reasons, known bugs,
 *   allowed chunking differences (notes), differential categories, slowest input, time
 */
function fuzz ({ seed, iterations = 1000, start = 0, only, differentialEvery = 1, budgetMs, minimize: shrink = true, until, onProgress, target = defaultTarget(), batch = 200 }) {
  const summary = {
    seed,
    target: target.name,
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
  const reparse = (buf) => target.oneBuffer(buf)
  for (let next = from; next < to;) {
    if (until !== undefined && Date.now() > until) break
    // a batch of inputs goes to the target at once (one Go process), then is checked input by input
    const items = []
    for (; next < to && items.length < batch; next++) {
      const rng = new Rng(seed, next)
      const { input } = generate(rng)
      const options = optionsFor(rng)
      const planSeed = rng.u32()
      items.push({ index: next, input, options, planSeed, plans: plansFor(input, planSeed, options, target) })
    }
    const results = target.runBatch(items)
    for (let k = 0; k < items.length; k++) {
      const { index, input, options, planSeed, plans } = items[k]
      let result
      try {
        result = verify(target, input, options, plans, results[k])
      } catch (err) {
        const kind = err instanceof InvariantError ? err.kind : 'unexpected'
        const minimized = shrink ? minimize(input, (c) => kindOf(() => checkInput(target, c, planSeed, options)) === kind) : null
        throw new FuzzFailure({ seed, index, kind, message: err.message, input, minimized, details: err.details })
      }
      const ms = result.ms
      const limit = budgetMs ?? 200 + input.length * 0.02
      if (ms > limit) {
        // measured again, to tell a GC pause or a busy machine from a slow input
        const ms2 = checkInput(target, input, planSeed, options).ms
        if (ms2 > limit) {
          throw new FuzzFailure({ seed, index, kind: 'slow', message: `all plans took ${ms.toFixed(0)} ms then ${ms2.toFixed(0)} ms (limit ${limit.toFixed(0)} ms)`, input })
        }
      }
      if (ms > summary.slowest.ms) summary.slowest = { ms: Math.round(ms * 10) / 10, index, bytes: input.length }
      count(summary, result.events)
      for (const id of new Set(result.known)) summary.knownBugs[id] = (summary.knownBugs[id] || 0) + 1
      for (const id of new Set(result.notes)) summary.notes[id] = (summary.notes[id] || 0) + 1
      if (differentialEvery > 0 && index % differentialEvery === 0 && Object.keys(options).length === 0 && differential.available) {
        const d = differential.compare(input, result.events, result.boundaries, reparse)
        differential.record(summary.differential, d, input, index)
        if (d.kind !== null && d.category === null) {
          const minimized = shrink
            ? minimize(input, (c) => {
              try {
                const r = checkInput(target, c, planSeed, options)
                const dc = differential.compare(c, r.events, r.boundaries, reparse)
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

/** The Go parser through one fuzz-driver built for this process, removed at exit. */
let shared = null
function defaultTarget () {
  if (shared === null) {
    shared = goTarget()
    process.once('exit', () => shared.cleanup())
  }
  return shared
}

module.exports = { fuzz, checkInput, checkInputs, plansFor, minimize, optionsFor, FuzzFailure, show, defaultTarget }
