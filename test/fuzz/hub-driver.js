'use strict'

// The JS parser's driver (src/hub/http-parser.js), for its own tests while src/hub
// exists (test/unit/hub/http-parser-fuzz.test.js, test/unit/router/parse-differential.test.js);
// it goes with src/hub, and nothing else in test/fuzz requires it.
//
// Drives the hub's RequestParser over one input under a "plan" (how the bytes are cut
// into execute() calls, where handlers pause, whether the caller scribbles over its
// buffers, whether the parser is reused after reset()), records what the handlers saw
// as plain data, and checks the parser's contract on every call. A broken contract
// throws an InvariantError; an exception out of the parser itself is reported as one
// too (kind 'exception'), so the fuzz loop treats both the same way.

const { RequestParser, ParseError } = require('../../src/hub/http-parser')
const { Rng } = require('./rng')
const { InvariantError, fail, Splits, STATUSES, checkFields, checkHead, trimOws, listOf, hostPortOk, authorityOf } = require('./rules')
const { fuzz, checkInput } = require('./fuzz')
const { checkScaling: checkScalingOf, SHAPES } = require('./scaling')

/**
 * Runs the parser over `input`.
 * @param {Buffer} input
 * @param {object} plan
 * @param {Array<[number, number]>} plan.splits pieces of input fed to execute(), in order
 * @param {object} [plan.options] parser options
 * @param {number} [plan.pauseProbability=0] per callback, drawn from plan.seed
 * @param {boolean} [plan.pauseOnComplete=false] pause at every onComplete and record where
 *   each message ended (boundaries, stream offsets)
 * @param {boolean} [plan.scribble=false] overwrite each piece after execute() is done with it
 * @param {Buffer} [plan.prefix] fed first, then reset() before the input
 * @param {number} [plan.seed=1]
 * @returns {{ events: Array, boundaries: number[], errored: boolean, errorAt: number, known: string[] }}
 */
function runHub (input, plan) {
  const rng = new Rng(plan.seed || 1, 77)
  const pauseP = plan.pauseProbability || 0
  const events = []
  const boundaries = []
  let parser = null
  let active = false // inside a driver call into the parser
  let errored = false
  let errorAt = -1 // stream offset execute() returned in the call that reported the error
  const known = [] // known bugs (known-bugs.js) seen in heads
  let msg = null // the message in progress: { head, bodyLen }
  let recording = !plan.prefix
  let pauseReason = null

  const maybePause = (what) => {
    if (!recording) return
    if ((what === 'complete' && plan.pauseOnComplete) || (pauseP > 0 && rng.chance(pauseP))) {
      pauseReason = what
      parser.pause()
    }
  }
  const guard = (what) => {
    if (!active) fail('callback-outside-call', `${what} called outside execute()/resume()/finish()`)
    if (errored) fail('callback-after-error', `${what} called after onError`)
  }
  const handlers = {
    onHead (head) {
      guard('onHead')
      if (msg !== null) fail('head-in-message', 'onHead before the previous message completed', { previous: msg.snapshot })
      const snapshot = snapshotHead(head)
      if (head.trailers !== null) fail('head-shape', 'head.trailers set at onHead')
      checkHead(snapshot, plan.options || {}, known)
      msg = { head, snapshot, bodyLen: 0 }
      if (recording) events.push(['head', snapshot])
      maybePause('head')
    },
    onBody (chunk) {
      guard('onBody')
      if (msg === null) fail('body-without-head', 'onBody outside a message')
      if (!Buffer.isBuffer(chunk)) fail('body-type', 'onBody chunk is not a Buffer')
      if (chunk.length === 0) fail('empty-body-chunk', 'onBody with an empty chunk')
      if (!msg.head.hasBody) fail('body-without-hasBody', 'onBody for a head with hasBody false')
      msg.bodyLen += chunk.length
      if (msg.head.contentLength >= 0 && msg.bodyLen > msg.head.contentLength) {
        fail('body-overrun', `body of ${msg.bodyLen} bytes for Content-Length ${msg.head.contentLength}`)
      }
      if (recording) {
        const last = events[events.length - 1] || []
        const text = chunk.latin1Slice(0, chunk.length)
        if (last[0] === 'body') last[1] += text
        else events.push(['body', text])
      }
      maybePause('body')
    },
    onComplete () {
      guard('onComplete')
      if (msg === null) fail('complete-without-head', 'onComplete outside a message')
      const h = msg.head
      if (h.contentLength >= 0 && msg.bodyLen !== Math.max(0, h.contentLength)) {
        fail('body-length', `body of ${msg.bodyLen} bytes for Content-Length ${h.contentLength}`)
      }
      const t = h.trailers
      if (t !== null && (!h.chunked || !Array.isArray(t) || t.length === 0 || t.length % 2 !== 0)) {
        fail('trailers-shape', 'trailers must be null or a non-empty [name, value, ...] of a chunked message', { trailers: t })
      }
      if (t !== null) checkFields(t, 'trailer')
      if (recording) events.push(['complete', t === null ? null : t.slice()])
      msg = null
      maybePause('complete')
    },
    onError (err) {
      guard('onError')
      if (!(err instanceof ParseError)) fail('error-type', 'onError with something else than a ParseError', { err: String(err) })
      if (!STATUSES.has(err.status)) fail('error-status', `unexpected status ${err.status}`)
      if (typeof err.reason !== 'string' || err.reason === '') fail('error-reason', 'ParseError without a reason')
      if (recording) events.push(['error', err.status, err.reason])
      errored = true
      msg = null
    }
  }

  parser = new RequestParser(plan.options, handlers)
  const call = (fn) => {
    active = true
    try {
      return fn()
    } catch (err) {
      if (err instanceof InvariantError) throw err
      fail('exception', `the parser threw: ${err && err.stack}`)
    } finally {
      active = false
    }
  }

  if (plan.prefix) {
    call(() => parser.execute(plan.prefix))
    call(() => parser.reset())
    if (parser.paused) fail('reset', 'paused after reset()')
    recording = true
    errored = false
    msg = null
  }

  let base = 0
  for (const [a, b] of plan.splits) {
    const piece = plan.scribble ? Buffer.from(input.subarray(a, b)) : input.subarray(a, b)
    let off = 0
    for (let spins = 0; ; spins++) {
      if (spins > piece.length + 1000) fail('no-progress', 'execute() keeps returning without progress')
      const rest = off === 0 ? piece : piece.subarray(off)
      const before = events.length
      const wasErrored = errored
      const n = call(() => parser.execute(rest))
      if (!Number.isInteger(n) || n < 0 || n > rest.length) fail('execute-return', `execute() returned ${n} for ${rest.length} bytes`)
      if (wasErrored && (n !== 0 || events.length !== before)) fail('after-error', 'execute() consumed input after an error')
      off += n
      if (errored) {
        if (!wasErrored) errorAt = base + off
        break
      }
      if (parser.paused) {
        if (pauseReason === 'complete' && plan.pauseOnComplete) boundaries.push(base + off)
        pauseReason = null
        const again = events.length
        const m = call(() => parser.execute(off === 0 ? piece : piece.subarray(off)))
        if (m !== 0 || events.length !== again) fail('paused-execute', 'execute() while paused consumed input or called a handler')
        for (let k = 0; parser.paused; k++) {
          if (k > 1000) fail('no-progress', 'resume() keeps pausing')
          call(() => parser.resume())
          if (parser.paused && pauseReason === 'complete' && plan.pauseOnComplete) boundaries.push(base + off)
          pauseReason = null
        }
        if (off === piece.length) break
        continue
      }
      if (off !== piece.length) fail('short-execute', `execute() consumed ${off} of ${piece.length} bytes without a pause or an error`)
      break
    }
    if (plan.scribble) piece.fill(0xee)
    base += b - a
  }

  const inMessage = msg !== null
  const fin = call(() => parser.finish())
  if (errored) {
    if (fin !== null) fail('finish', 'finish() after an error must return null')
  } else if (fin !== null) {
    if (!(fin instanceof ParseError) || fin.status !== 400) fail('finish', 'finish() returned something else than null or a 400 ParseError')
  } else if (inMessage) {
    fail('finish', 'finish() returned null while a message was in progress (head without onComplete)')
  }
  if (fin !== null && call(() => parser.finish()) !== null) fail('finish', 'finish() reported twice')
  events.push(['finish', fin === null ? null : fin.status])
  return { events, boundaries, errored: errored || fin !== null, errorAt, known }
}

function snapshotHead (head) {
  return {
    method: head.method,
    url: head.url,
    versionMajor: head.versionMajor,
    versionMinor: head.versionMinor,
    rawHeaders: Array.isArray(head.rawHeaders) ? head.rawHeaders.slice() : head.rawHeaders,
    host: head.host,
    contentLength: head.contentLength,
    chunked: head.chunked,
    keepAlive: head.keepAlive,
    expectContinue: head.expectContinue,
    expectOther: head.expectOther,
    upgrade: head.upgrade,
    hasBody: head.hasBody
  }
}

/**
 * The JS parser as a fuzz target (fuzz.js): each input's plans run here, in process,
 * the contract checked in the handlers; a broken one is the input's result.
 */
const hubTarget = {
  name: 'hub',
  pausesAtComplete: true,
  runBatch (items) {
    return items.map(({ input, plans }) => {
      const t0 = process.hrtime.bigint()
      try {
        const runs = plans.map(([name, spec]) => ({ name, ...runHub(input, spec) }))
        return { runs, ms: Number(process.hrtime.bigint() - t0) / 1e6 }
      } catch (error) {
        return { error }
      }
    })
  },
  oneBuffer: (buf) => runHub(buf, { splits: Splits.whole(buf.length) }).events,
  timeRuns (jobs, runs) {
    return jobs.map(({ input, splits, options }) => {
      let best = Infinity
      timeOnce(input, splits, options) // warms the JIT up
      for (let r = 0; r < runs; r++) best = Math.min(best, timeOnce(input, splits, options))
      return best
    })
  }
}

function timeOnce (input, splits, options) {
  let errors = 0
  const pieces = splits.map(([a, b]) => input.subarray(a, b))
  const p = new RequestParser(options, { onHead () {}, onBody () {}, onComplete () {}, onError () { errors++ } })
  const t0 = process.hrtime.bigint()
  for (const piece of pieces) p.execute(piece)
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (errors) throw new Error('a scaling input was refused: the shape is wrong')
  return ms
}

// the fuzz loop, one input's check and the time-vs-size check on the JS parser
// (test/unit/hub/http-parser-fuzz.test.js)
const fuzzHub = (o) => fuzz({ ...o, target: hubTarget })
const checkHub = (input, planSeed, options) => checkInput(hubTarget, input, planSeed, options)
const checkScaling = (o) => checkScalingOf({ n: 32768, runs: 3, ...o, target: hubTarget })

module.exports = { runHub, hubTarget, fuzzHub, checkHub, checkScaling, SHAPES, Splits, InvariantError, trimOws, listOf, hostPortOk, authorityOf }
