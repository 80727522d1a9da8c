'use strict'

// The Go router's HTTP/1.1 parser (router/internal/parse) against the JS one
// (src/hub/http-parser.js), on the JS fuzzer's inputs (test/fuzz: corpus.js and
// mutate.js, fixed seeds). Both parse each input under the same plan (one buffer,
// random cuts, byte by byte) and must give the same events: heads (method, url,
// version, rawHeaders, host, contentLength, chunked, keepAlive, expect*, upgrade,
// hasBody), body bytes, trailers, error statuses and reasons, finish(). The JS
// parser is the reference until src/hub is gone (issue 25).

const { spawnSync } = require('node:child_process')
const { isDeepStrictEqual } = require('node:util')
const { METHODS } = require('node:http')
const { Rng } = require('../../fuzz/rng')
const { generate } = require('../../fuzz/mutate')
const { optionsFor, show } = require('../../fuzz/fuzz')
const { SEEDS } = require('../../fuzz/corpus')
const { runHub, Splits } = require('../../fuzz/hub-driver')
const { buildGo } = require('../../helpers/go-build')

let driver = null

beforeAll(() => {
  driver = buildGo('parse-driver')
}, 300000)

afterAll(() => {
  if (driver !== null) driver.cleanup()
})

/** Runs jobs ({ input, options, splits }) through the Go driver; one result per job. */
function runGo (jobs) {
  const lines = jobs.map(({ input, options, splits }) => JSON.stringify({
    input: input.toString('base64'),
    options: { ...options, maxBodySize: options.maxBodySize === Infinity ? null : options.maxBodySize },
    splits: splits || null
  }))
  const r = spawnSync(driver.bin, [], { input: lines.join('\n') + '\n', maxBuffer: 1 << 30, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`parse-driver exited ${r.status}: ${r.stderr}`)
  const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
  expect(out).toHaveLength(jobs.length)
  return out
}

/** The first event where the two runs differ, as a message; null when they agree. */
function difference (job, js, go) {
  if (go.violation) return `the Go parser broke its contract: ${go.violation}`
  if (isDeepStrictEqual(js, go.events)) return null
  let i = 0
  while (i < js.length && isDeepStrictEqual(js[i], go.events[i])) i++
  return `event ${i} differs\n  JS: ${JSON.stringify(js.slice(i, i + 2)).slice(0, 1500)}\n  Go: ${JSON.stringify(go.events.slice(i, i + 2)).slice(0, 1500)}`
}

function compare (jobs) {
  const go = runGo(jobs)
  const failures = []
  let heads = 0
  let errors = 0
  for (let k = 0; k < jobs.length; k++) {
    const job = jobs[k]
    const js = runHub(job.input, { splits: job.splits || Splits.whole(job.input.length), options: job.options }).events
    const why = difference(job, js, go[k])
    if (why !== null) {
      failures.push(`${job.name} (plan ${job.plan}, options ${JSON.stringify(job.options)}): ${why}\n  input (${job.input.length} bytes): ${show(job.input)}`)
      if (failures.length >= 5) break
    }
    for (const e of js) {
      if (e[0] === 'head') heads++
      else if (e[0] === 'error') errors++
    }
  }
  return { failures, heads, errors }
}

/** Input i of seed s (fuzz.js's generate + optionsFor) under up to three plans. */
function jobsOf (seed, count) {
  const jobs = []
  for (let index = 0; index < count; index++) {
    const rng = new Rng(seed, index)
    const { input } = generate(rng)
    const options = optionsFor(rng)
    const name = `seed ${seed} input ${index} (replay: npm run fuzz -- --seed ${seed} --only ${index})`
    jobs.push({ name, plan: 'one buffer', input, options, splits: null })
    const plans = new Rng(seed, 1000000 + index)
    jobs.push({ name, plan: 'random cuts', input, options, splits: Splits.cuts(input.length, plans, plans.range(1, 6)) })
    if (index % 4 === 0 && input.length <= 4096) {
      jobs.push({ name, plan: 'byte by byte', input, options, splits: Splits.bytes(input.length) })
    } else if (index % 4 === 2) {
      jobs.push({ name, plan: 'small pieces', input, options, splits: Splits.random(input.length, plans, 97) })
    }
  }
  return jobs
}

describe('the Go parser gives the JS parser\'s events', () => {
  test('it accepts exactly node\'s http.METHODS, as the JS parser does', () => {
    const r = spawnSync(driver.bin, ['-methods'], { encoding: 'utf8' })
    expect(JSON.parse(r.stdout)).toEqual(METHODS)
  })

  test('every corpus seed, whole and byte by byte', () => {
    const jobs = []
    for (const [name, text] of SEEDS) {
      const input = Buffer.from(text, 'latin1')
      jobs.push({ name: `corpus ${name}`, plan: 'one buffer', input, options: {}, splits: null })
      jobs.push({ name: `corpus ${name}`, plan: 'byte by byte', input, options: {}, splits: Splits.bytes(input.length) })
    }
    const { failures, heads } = compare(jobs)
    expect(failures).toEqual([])
    expect(heads).toBeGreaterThan(SEEDS.length)
  })

  test.each([[41], [42]])('seed %i: 1500 mutated inputs under several plans', (seed) => {
    const { failures, heads, errors } = compare(jobsOf(seed, 1500))
    expect(failures).toEqual([])
    // the inputs reach both sides of the parser: accepted requests and every kind of refusal
    expect(heads).toBeGreaterThan(500)
    expect(errors).toBeGreaterThan(500)
  })
})
