'use strict'

// The long fuzz run of the router's HTTP parser (router/internal/parse, Go), through
// router/cmd/fuzz-driver (built into a temp dir at start, removed at exit):
//
//   npm run fuzz [-- --iterations N] [--seed S] [--seconds T] [--start I | --only I]
//                [--differential-every K] [--no-minimize] [--no-scaling] [--json]
//
// Without --seed a random seed is drawn and printed; `--seed S --only I` replays input I
// of seed S (a failure prints that command). Exit code 1 on a failure: an exception out
// of the parser, a broken contract, chunkings that disagree, a slow input, an
// unexplained disagreement with llhttp, or super-linear time (scaling.js).
// See test/fuzz/README.md for what is checked.

const crypto = require('node:crypto')
const { fuzz, FuzzFailure, checkInput, defaultTarget, show, optionsFor } = require('./fuzz')
const { Rng } = require('./rng')
const { generate } = require('./mutate')
const differential = require('./differential')
const { CATEGORIES } = require('./categories')
const { KNOWN_BUGS } = require('./known-bugs')
const { checkScaling } = require('./scaling')
const { available } = require('./llhttp-driver')

function parseArgs (argv) {
  const o = { iterations: 200000, seed: undefined, seconds: undefined, start: 0, only: undefined, differentialEvery: 1, minimize: true, scaling: true, json: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const num = () => {
      const v = Number(argv[++i])
      if (!Number.isFinite(v)) throw new Error(`${a} needs a number`)
      return v
    }
    if (a === '--iterations' || a === '-n') o.iterations = num()
    else if (a === '--seed') o.seed = num() >>> 0
    else if (a === '--seconds') o.seconds = num()
    else if (a === '--start') o.start = num()
    else if (a === '--only') o.only = num()
    else if (a === '--differential-every') o.differentialEvery = num()
    else if (a === '--no-minimize') o.minimize = false
    else if (a === '--no-scaling') o.scaling = false
    else if (a === '--json') o.json = true
    else if (a === '--help' || a === '-h') o.help = true
    else throw new Error(`unknown argument ${a} (try --help)`)
  }
  return o
}

const pad = (s, n) => String(s).padEnd(n)
const num = (n) => n.toLocaleString('en-US')
const sorted = (o) => Object.entries(o).sort((a, b) => b[1] - a[1])

function print (s, o, scaling) {
  const out = []
  const sec = s.ms / 1000
  out.push(`parser fuzz (the router's Go parser): seed ${s.seed}, inputs ${o.only ?? o.start}..${s.next - 1}` +
    ` (node ${process.versions.node}, llhttp ${process.versions.llhttp}${available ? '' : ', not reachable: no differential run'})`)
  out.push(`inputs ${num(s.inputs)} (${(s.bytes / 1048576).toFixed(1)} MiB) in ${sec.toFixed(1)} s, ${num(Math.round(s.inputs / Math.max(sec, 0.001)))}/s;` +
    ' each parsed under 4 plans (one buffer, which also stops at each complete; random cuts; byte by byte or small pieces; random stops + scribbled buffers + Reset())')
  out.push(`slowest input: ${s.slowest.ms} ms for all plans (input ${s.slowest.index}, ${num(s.slowest.bytes)} bytes)`)
  out.push(`verdicts: ${num(s.accepted)} requests accepted; streams: ` + sorted(s.endings).map(([k, v]) => `${k} ${num(v)}`).join(', '))
  out.push('error reasons (one buffer): ' + sorted(s.reasons).slice(0, 12).map(([k, v]) => `${k} ${num(v)}`).join('; ') +
    (Object.keys(s.reasons).length > 12 ? `; ... ${Object.keys(s.reasons).length - 12} more` : ''))
  out.push('allowed differences between chunkings (inputs): ' + (sorted(s.notes).map(([k, v]) => `${k} ${num(v)}`).join(', ') || 'none'))
  const known = { ...s.knownBugs }
  for (const [k, v] of Object.entries(s.differential.knownBugs)) {
    const id = k.replace(/^known-bug:/, '')
    known[id] = (known[id] || 0) + v
  }
  out.push('known parser bugs hit (inputs): ' + (sorted(known).map(([k, v]) => `${k} ${num(v)}`).join(', ') || 'none'))
  const d = s.differential
  if (d.compared) {
    const dis = d.compared - d.agreed
    out.push(`differential vs llhttp: ${num(d.compared)} inputs compared, ${num(d.agreed)} agree request by request, ${num(dis)} disagree:`)
    const reasons = new Map(CATEGORIES.map((c) => [c.id, c.reason]))
    const width = Math.max(...Object.keys(d.categories).map((k) => k.length), ...Object.keys(d.knownBugs).map((k) => k.length), 10)
    for (const [k, v] of sorted(d.categories)) out.push(`  ${pad(k, width)} ${String(num(v)).padStart(7)}  ${reasons.get(k) || ''}`)
    for (const [k, v] of sorted(d.knownBugs)) out.push(`  ${pad(k, width)} ${String(num(v)).padStart(7)}  (a bug, see known-bugs.js)`)
    out.push(`  ${pad('unexplained', width)} ${String(num(Object.values(d.unexplained).reduce((a, b) => a + b, 0))).padStart(7)}`)
    out.push('  both rejecting, parser status / llhttp code: ' + sorted(d.statusPairs).map(([k, v]) => `${k} ${num(v)}`).join(', '))
  }
  if (scaling) {
    out.push('time vs size (4x the bytes; linear ~4, quadratic ~16): ' +
      scaling.map((r) => `${r.shape} ${r.ratio}${r.ok ? '' : ' (TOO SLOW)'}`).join('; '))
  }
  console.log(out.join('\n'))
}

function main () {
  let o
  try {
    o = parseArgs(process.argv.slice(2))
  } catch (err) {
    console.error(err.message)
    process.exitCode = 2
    return
  }
  if (o.help) {
    console.log('npm run fuzz [-- --iterations N] [--seed S] [--seconds T] [--start I | --only I] ' +
      '[--differential-every K] [--no-minimize] [--no-scaling] [--json]')
    return
  }
  if (o.seed === undefined) o.seed = crypto.randomInt(2 ** 31)
  console.log(`seed ${o.seed} (replay with --seed ${o.seed})`)
  let scaling = null
  if (o.scaling && o.only === undefined) scaling = checkScaling()
  let summary
  try {
    summary = fuzz({
      seed: o.seed,
      iterations: o.iterations,
      start: o.start,
      only: o.only,
      differentialEvery: o.differentialEvery,
      minimize: o.minimize,
      until: o.seconds ? Date.now() + o.seconds * 1000 : undefined,
      onProgress: o.json ? undefined : (s) => process.stderr.write(`  ${num(s.inputs)} inputs, ${((Date.now() - started) / 1000).toFixed(0)} s\r`)
    })
  } catch (err) {
    if (!(err instanceof FuzzFailure)) throw err
    console.error(`\nFAILED\n${err.message}`)
    process.exitCode = 1
    return
  }
  if (o.only !== undefined) explain(o.seed, o.only)
  if (o.json) console.log(JSON.stringify({ ...summary, scaling, knownBugDescriptions: KNOWN_BUGS.map((b) => ({ id: b.id, summary: b.summary })) }, null, 2))
  else print(summary, o, scaling)
  if (scaling && scaling.some((r) => !r.ok)) {
    console.error('FAILED: super-linear time, see "time vs size" above')
    process.exitCode = 1
  }
}

/** For --only: the input, what the parser made of it, and the differential verdict. */
function explain (seed, index) {
  const rng = new Rng(seed, index)
  const { input, mutations } = generate(rng)
  const options = optionsFor(rng)
  const r = checkInput(defaultTarget(), input, rng.u32(), options)
  console.log(`input ${index} of seed ${seed} (${input.length} bytes; mutations: ${mutations.join(', ') || 'none'}; ` +
    `options ${JSON.stringify(options)}):\n  ${show(input, 4000)}`)
  console.log('parser, one buffer:\n' + r.events.map((e) => `  ${JSON.stringify(e).slice(0, 300)}`).join('\n'))
  if (Object.keys(options).length === 0 && differential.available) {
    const d = differential.compare(input, r.events, r.boundaries, (buf) => defaultTarget().oneBuffer(buf))
    console.log(`llhttp: ${d.kind === null ? 'agrees' : `${d.detail} -> ${d.category || 'UNEXPLAINED'}`}`)
  }
}

const started = Date.now()
main()
