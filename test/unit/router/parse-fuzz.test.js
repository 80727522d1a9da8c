'use strict'

// A bounded run of the fuzzer (test/fuzz/, see its README.md) on the router's Go parser
// (router/internal/parse, through router/cmd/fuzz-driver: one Go process per batch of
// inputs): fixed seeds, a few thousand mutated requests, each parsed under four plans
// with the parser's contract checked on every call and the README's rules checked on
// every accepted head, a differential run against node's llhttp, and a time-vs-size
// check. `npm run fuzz` is the long run. Nothing here needs src/hub (issue 25).
// A failure message carries the seed and input index: `npm run fuzz -- --seed S --only I`.

const fs = require('node:fs')
const path = require('node:path')
const { fuzz, checkInput, checkInputs, minimize } = require('../../fuzz/fuzz')
const differential = require('../../fuzz/differential')
const { SEEDS } = require('../../fuzz/corpus')
const { CATEGORIES, chunkLineOk } = require('../../fuzz/categories')
const { checkScaling } = require('../../fuzz/scaling')
const { goTarget } = require('../../fuzz/go-driver')
const { buildGo } = require('../../helpers/go-build')

const b = (s) => Buffer.from(s, 'latin1')
// the per-input time limit is for the long run; here the machine is shared with other
// test files, and super-linear time is what the scaling test is for
const budgetMs = 2000

let built = null
let target = null

beforeAll(() => {
  built = buildGo('fuzz-driver')
  target = goTarget({ bin: built.bin })
}, 300000)

afterAll(() => {
  if (built !== null) built.cleanup()
})

const oneBuffer = (text) => target.oneBuffer(b(text))
const seedText = (name) => SEEDS.find((s) => s[0] === name)[1]

describe('fuzzing the Go parser', () => {
  test.each([[1], [2]])('seed %i: 1500 inputs, every plan gives the same verdicts, no contract or rule broken', (seed) => {
    const s = fuzz({ seed, iterations: 1500, differentialEvery: 0, budgetMs, target })
    expect(s.inputs).toBe(1500)
    expect(s.accepted).toBeGreaterThan(200) // the corpus is not all garbage
    expect(Object.keys(s.endings).length).toBeGreaterThan(3)
    // the plans cut lines where one buffer does not: the allowances are exercised
    expect(s.notes['error-reason-depends-on-chunking']).toBeGreaterThan(0)
  })

  const llhttp = differential.available ? test : test.skip
  llhttp('seed 3: 1200 inputs agree with llhttp or fall in an accepted category', () => {
    const s = fuzz({ seed: 3, iterations: 1200, differentialEvery: 1, budgetMs, target })
    expect(s.differential.compared).toBeGreaterThan(800)
    expect(s.differential.unexplained).toEqual({})
    expect(s.differential.agreed).toBeGreaterThan(s.differential.compared / 2)
    for (const id of Object.keys(s.differential.categories)) expect(CATEGORIES.map((c) => c.id)).toContain(id)
  })

  llhttp('every corpus seed, unmutated, agrees with llhttp or falls in an accepted category', () => {
    const inputs = SEEDS.map(([, text]) => ({ input: b(text), planSeed: 1, options: {} }))
    const results = checkInputs(target, inputs)
    SEEDS.forEach(([name], k) => {
      const d = differential.compare(inputs[k].input, results[k].events, results[k].boundaries, target.oneBuffer)
      if (d.kind !== null && d.category === null) throw new Error(`corpus seed ${name}: ${d.detail}`)
    })
  })

  test('valid corpus requests are accepted whole', () => {
    for (const name of ['get', 'get-browser', 'post-cl', 'chunked-ext', 'chunked-trailers', 'pipeline', 'near-limit-head']) {
      const events = oneBuffer(seedText(name))
      expect(events.filter((e) => e[0] === 'error')).toEqual([])
      expect(events[events.length - 1]).toEqual(['finish', null])
    }
  })

  test('time grows linearly with the input (long lines byte by byte, many lines, pipelines)', () => {
    // a ratio of 12 leaves room for a machine busy with other test files; quadratic is ~16
    const results = checkScaling({ maxRatio: 12, target })
    expect(results.filter((r) => !r.ok)).toEqual([])
  })

  // issue 23: the app and the output cache see the Host's port, so one that is not digits
  // must be 400 (HTTP.SYS's rule), in Host and in an absolute-form target alike
  test('the Host port rule: the corpus\'s Host and target whose port is not digits are 400, and the checks fail a parser that accepts them', () => {
    expect(oneBuffer(seedText('host-port-not-digits'))).toEqual([['error', 400, 'invalid port in Host header'], ['finish', null]])
    expect(oneBuffer(seedText('target-port-not-digits'))).toEqual([['error', 400, 'invalid port in the request-target'], ['finish', null]])
    // a parser without the rule (simulated: it parses as for a server that owns its port,
    // while the checks hold it to the defaults)
    const lax = { ...target, runBatch: (items) => target.runBatch(items.map((it) => ({ ...it, options: { ...it.options, strictHost: false } }))) }
    expect(() => checkInput(lax, b(seedText('host-port-not-digits')), 1, {})).toThrow(/a Host whose port is not digits accepted/)
    expect(() => checkInput(lax, b(seedText('target-port-not-digits')), 1, {})).toThrow(/an absolute-form target whose port is not digits accepted/)
  })

  test('a chunking-dependent parser is caught, with the seed and input to replay it', () => {
    // an incremental-state bug, simulated: a ':' arriving alone in its read becomes ';'
    const colonAlone = (input, splits) => {
      const out = Buffer.from(input)
      for (const [s, e] of splits) if (e - s === 1 && out[s] === 0x3a) out[s] = 0x3b
      return out
    }
    const buggy = {
      ...target,
      runBatch (items) {
        const jobs = []
        for (const it of items) {
          jobs.push({ ...it, plans: it.plans.slice(0, 1) })
          for (const plan of it.plans.slice(1)) jobs.push({ ...it, input: colonAlone(it.input, plan[1].splits), plans: [plan] })
        }
        const out = target.runBatch(jobs)
        let at = 0
        return items.map((it) => {
          const mine = out.slice(at, at + it.plans.length)
          at += it.plans.length
          const bad = mine.find((r) => r.error)
          return bad || { runs: mine.map((r) => r.runs[0]), ms: 0 }
        })
      }
    }
    expect(() => fuzz({ seed: 1, iterations: 200, differentialEvery: 0, minimize: false, target: buggy }))
      .toThrow(/chunking: plan (?:byte-by-byte|random-cuts|small-pieces|pauses)[\s\S]*seed 1, input \d+[\s\S]*--seed 1 --only \d+/)
  })

  test('a broken contract reported by the Go driver fails the input, with its seed and index', () => {
    const broken = {
      ...target,
      runBatch: (items) => target.runBatch(items).map((r, k) => k === 3 ? { error: new (require('../../fuzz/rules').InvariantError)('contract', 'Parse took 5 of 4 bytes') } : r)
    }
    expect(() => fuzz({ seed: 1, start: 40, iterations: 10, differentialEvery: 0, minimize: false, target: broken }))
      .toThrow(/contract: Parse took 5 of 4 bytes[\s\S]*seed 1, input 43/)
  })

  llhttp('a head that differs from llhttp\'s is not explained away', () => {
    const input = b('GET /a HTTP/1.1\r\nHost: a\r\n\r\n')
    const r = checkInput(target, input, 1, {})
    expect(differential.compare(input, r.events, r.boundaries, target.oneBuffer).kind).toBeNull()
    const events = JSON.parse(JSON.stringify(r.events))
    events[0][1].url = '/b'
    expect(differential.compare(input, events, r.boundaries, target.oneBuffer)).toMatchObject({ kind: 'mismatch', category: null })
  })

  test('the chunk-line grammar used to judge disagreements is RFC 9112 7.1.1', () => {
    const valid = ['1', '1;a', '1;a=b', '1 ;a = b', '1;a="x\\"y"', '1;a;b=c', 'ff\t;\ta\t=\t""', '1;a="\xe9"']
    const invalid = ['1 ', '1;', '1;a=', '1;;a', '1;a=b""', '1;a="x', '1;a b', ';a', '1;a ', '1;a="\x01"', 'g']
    expect(valid.filter((l) => !chunkLineOk(l))).toEqual([])
    expect(invalid.filter((l) => chunkLineOk(l))).toEqual([])
  })

  test('the minimizer keeps what makes an input fail', () => {
    const small = minimize(b('GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n'), (c) => c.includes(0) && c.includes(58))
    expect(small.length).toBeLessThanOrEqual(2)
  })

  // issue 25: src/hub went; the fuzzer did not go with it
  test('nothing in test/fuzz requires src/hub', () => {
    const dir = path.join(__dirname, '..', '..', 'fuzz')
    const needing = fs.readdirSync(dir).filter((f) => f.endsWith('.js'))
      .filter((f) => /require\([^)]*(?:src\/hub|hub-driver)/.test(fs.readFileSync(path.join(dir, f), 'utf8')))
    expect(needing).toEqual([])
  })
})

// src/hub/client-connection.js, router/internal/conn: a port a standalone server owns
// gets node's rules (no Host needed, any Host, CONNECT served, insecureHTTPParser on
// request); the fuzzer draws these options for some inputs, and holds the parser to them
describe('a port a standalone server owns', () => {
  const OWN = { requireHost: false, strictHost: false, connect: true, lenient: true }
  const INPUTS = [
    'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nContent-Length: 5\r\n\r\n\x16\x03\x01\x00\x05',
    'GET / HTTP/1.1\r\nX: a\x01b\x7f\r\n\r\n',
    "GET / HTTP/1.1\r\nHost: localhost:'onmouseover='x\r\n\r\n"
  ]
  const run = (options) => checkInputs(target, INPUTS.map((text) => ({ input: b(text), planSeed: 2, options })))

  test('takes what node takes, under every plan, within the relaxed rules', () => {
    const [connect, lenient, anyHost] = run(OWN).map((r) => r.events.filter((e) => e[0] === 'head').map((e) => e[1]))
    expect(connect[0]).toMatchObject({ method: 'CONNECT', url: 'example.com:443', upgrade: true, hasBody: false, contentLength: -1 })
    expect(lenient[0].rawHeaders).toEqual(['X', 'a\x01b\x7f'])
    expect(anyHost[0].host).toBe("localhost:'onmouseover='x")
  })

  test('the checks refuse each of these from a parser held to the defaults', () => {
    const lax = { ...target, runBatch: (items) => target.runBatch(items.map((it) => ({ ...it, options: OWN }))) }
    const reasons = INPUTS.map((text) => {
      try {
        checkInput(lax, b(text), 2, {})
        return null
      } catch (err) {
        return err.message
      }
    })
    expect(reasons).toEqual([
      expect.stringMatching(/a CONNECT accepted/),
      expect.stringMatching(/header value is not a trimmed field-value|HTTP\/1.1 request without Host accepted/),
      expect.stringMatching(/invalid Host value accepted|a Host whose port is not digits accepted/)
    ])
  })
})
