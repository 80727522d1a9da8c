#!/usr/bin/env node
'use strict'

// npm run test:compat -- [node] [suites] [options]
//
// Measures how close the preload's http server is to node's own, on tests that are not
// ours: node's test/parallel/test-http-*.js, and the test suites of koa, fastify and
// express (pinned in suites.json), each run on node's stack and then through the
// preload. Not part of `npm test`: it needs sources from outside the repo
// (test/compat/README.md says where they come from).
//
//   node      node's tests; needs NODE_SRC=<node source tree> (or --node-src); see
//             `node test/compat/get-node-tests.js`
//   suites    koa, fastify, express (or --suites koa,express)
//   (neither: both)
//
// Options:
//   --node-src DIR        node's source tree (test/parallel, test/common); default $NODE_SRC
//   --filter RE           only node test files whose name matches RE
//   --wine                node's tests with Windows node.exe under Wine, the preload on
//                         HTTP.SYS (the addon test/windows builds; run npm run test:windows
//                         once first); with no --filter, the files of wine-subset.txt
//   --jobs N              concurrent test processes (default 2)
//   --timeout S           per node test file, seconds (default 30)
//   --suite-timeout S     per mocha suite run (express), seconds (default 1200)
//   --suite-file-timeout S  per test file of a node:test suite (koa, fastify), seconds (default 30)
//   --suites a,b          which suites (default: all of suites.json)
//   --out DIR             results folder (default ~/.cache/httpsys-compat/results/<time>)
//   --baseline-from TSV   reuse the baseline column of an earlier node.tsv
//   --keep-output         keep each node test run's output under <out>/output/
//   --from-tsv TSV        run nothing: classify an earlier node.tsv again (after editing
//                         node-known.json; with --wine, wine-known.json too) and print
//                         its summary
//
// Writes <out>/node.tsv (one row per node test file), <out>/suites.tsv, <out>/summary.md
// and <out>/summary.json, and prints the summary. Exit code: 0 when it ran (the numbers
// are the result, not a verdict), 2 for a usage or setup problem.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { runNodeTests, treeVersion } = require('./lib/node-tests')
const { classify, writeTsv, readRows, readBaseline, summarize, formatNodeSummary } = require('./lib/report')
const { runSuites, formatSuites, writeSuitesTsv } = require('./lib/suites')
const { wineSetup, finish } = require('./lib/wine')

const REPO = path.resolve(__dirname, '..', '..')
const REGISTER = path.join(REPO, 'src', 'register.js')
const CACHE = process.env.HTTPSYS_COMPAT_CACHE || path.join(os.homedir(), '.cache', 'httpsys-compat')

function parseArgs (argv) {
  const o = {
    parts: [],
    nodeSrc: process.env.NODE_SRC || '',
    filter: null,
    jobs: 2,
    timeoutS: 30,
    suiteTimeoutS: 1200,
    suiteFileTimeoutS: 30,
    suites: null,
    out: '',
    baselineFrom: '',
    keepOutput: false,
    fromTsv: '',
    wine: false
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const val = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`)
      return argv[++i]
    }
    if (a === 'node' || a === 'suites') o.parts.push(a)
    else if (a === '--node-src') o.nodeSrc = val()
    else if (a === '--filter') o.filter = new RegExp(val())
    else if (a === '--jobs') o.jobs = Number(val())
    else if (a === '--timeout') o.timeoutS = Number(val())
    else if (a === '--suite-timeout') o.suiteTimeoutS = Number(val())
    else if (a === '--suite-file-timeout') o.suiteFileTimeoutS = Number(val())
    else if (a === '--suites') o.suites = val().split(',').filter(Boolean)
    else if (a === '--out') o.out = val()
    else if (a === '--baseline-from') o.baselineFrom = val()
    else if (a === '--keep-output') o.keepOutput = true
    else if (a === '--wine') o.wine = true
    else if (a === '--from-tsv') o.fromTsv = val()
    else if (a === '-h' || a === '--help') usage()
    else usage(`unknown argument: ${a}`)
  }
  if (o.parts.length === 0) o.parts = o.wine ? ['node'] : ['node', 'suites']
  if (o.wine && o.parts.includes('suites')) usage('--wine runs node\'s tests only')
  if (!(o.jobs >= 1) || !(o.timeoutS > 0) || !(o.suiteTimeoutS > 0) || !(o.suiteFileTimeoutS > 0)) usage('--jobs and the timeouts take positive numbers')
  return o
}

/**
 * The classified failures: node-known.json, and under Wine wine-known.json on top (what
 * fails for Wine's HTTP.SYS or node.exe under Wine, docs/wine.md, or for HTTP.SYS itself).
 */
function knownList (wine) {
  const read = (name) => JSON.parse(fs.readFileSync(path.join(__dirname, name), 'utf8'))
  const known = read('node-known.json')
  if (wine) Object.assign(known, read('wine-known.json'))
  delete known.$comment
  return known
}

/** wine-subset.txt as a filter: the files listed, one per line (# comments). */
function wineSubset () {
  const names = fs.readFileSync(path.join(__dirname, 'wine-subset.txt'), 'utf8').split('\n')
    .map((l) => l.replace(/#.*/, '').trim()).filter(Boolean)
  return new RegExp(`^(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`)
}

function usage (problem) {
  const lines = fs.readFileSync(__filename, 'utf8').split('\n').slice(3)
  const head = lines.slice(0, lines.findIndex((l) => !l.startsWith('//')))
  const text = head.map((l) => l.replace(/^\/\/ ?/, '')).join('\n')
  if (problem) {
    process.stderr.write(`${problem}\n\n${text}\n`)
    process.exit(2)
  }
  process.stdout.write(text + '\n')
  process.exit(0)
}

function log (msg) {
  process.stderr.write(`[compat ${new Date().toISOString().slice(11, 19)}] ${msg}\n`)
}

const HOW_TO_GET_NODE = `node's tests are not in this repo. Get a tree with them (Debian's nodejs source package):
  node test/compat/get-node-tests.js        (as root: adds a deb-src line, apt-get source, unpacks test/)
then run with NODE_SRC=<the folder it prints> npm run test:compat`

// which httpsys was measured: the commit, and whether src/ had changes not committed
function srcState () {
  const git = (args) => {
    const r = require('node:child_process').spawnSync('git', ['-C', REPO, ...args], { encoding: 'utf8' })
    return r.status === 0 ? r.stdout.trim() : ''
  }
  const changed = git(['status', '--porcelain', '--', 'src']).split('\n').filter(Boolean).length
  return `${git(['rev-parse', '--short', 'HEAD']) || 'unknown'}${changed ? ` + ${changed} uncommitted change(s) in src/` : ''}`
}

async function main () {
  const o = parseArgs(process.argv.slice(2))
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)
  const outDir = path.resolve(o.out || path.join(CACHE, 'results', stamp))
  fs.mkdirSync(outDir, { recursive: true })
  const started = Date.now()
  const summary = { node: process.version, started: new Date(started).toISOString(), outDir, src: srcState() }
  const text = []

  if (o.fromTsv) {
    const rows = readRows(o.fromTsv)
    const known = knownList(o.wine)
    classify(rows, known)
    writeTsv(path.join(outDir, 'node.tsv'), rows)
    const s = summarize(rows, known)
    summary.nodeTests = { fromTsv: path.resolve(o.fromTsv), ...s }
    text.push(formatNodeSummary(s, { treeVersion: o.nodeSrc ? treeVersion(o.nodeSrc) : '(from ' + o.fromTsv + ')', timeoutS: o.timeoutS }))
  } else if (o.parts.includes('node')) {
    if (!o.nodeSrc) {
      process.stderr.write(HOW_TO_GET_NODE + '\n')
      if (o.parts.length === 1) process.exit(2)
      text.push('node tests: not run (no NODE_SRC)')
    } else {
      const nodeSrc = path.resolve(o.nodeSrc)
      const version = treeVersion(nodeSrc)
      let wine = null
      if (o.wine) {
        try {
          wine = wineSetup()
        } catch (err) {
          process.stderr.write(`${err.message}\n`)
          process.exit(2)
        }
        if (!o.filter) o.filter = wineSubset()
        summary.wine = { nodeExe: wine.nodeExe, addon: wine.addon }
      }
      log(`node tests from ${nodeSrc} (${version})${wine ? ' under Wine, on HTTP.SYS' : ''}, ${o.jobs} jobs, timeout ${o.timeoutS} s`)
      const t0 = Date.now()
      let rows
      try {
        rows = await runNodeTests({
          nodeSrc,
          register: REGISTER,
          jobs: o.jobs,
          timeoutMs: o.timeoutS * 1000,
          filter: o.filter,
          baselineFrom: o.baselineFrom ? readBaseline(o.baselineFrom) : null,
          keepOutput: o.keepOutput,
          outDir,
          log,
          wine
        })
      } catch (err) {
        process.stderr.write(`${err.message}\n${HOW_TO_GET_NODE}\n`)
        process.exit(2)
      } finally {
        if (wine !== null) finish(wine)
      }
      const known = knownList(wine !== null)
      classify(rows, known)
      writeTsv(path.join(outDir, 'node.tsv'), rows)
      const s = summarize(rows, known)
      s.seconds = Math.round((Date.now() - t0) / 1000)
      summary.nodeTests = { tree: nodeSrc, treeVersion: version, timeoutS: o.timeoutS, ...s }
      text.push((wine ? 'Under Wine (Windows node.exe, the preload on HTTP.SYS):\n\n' : '') +
        formatNodeSummary(s, { treeVersion: version, timeoutS: o.timeoutS }) + `\n\n(node tests took ${s.seconds} s)`)
    }
  }

  if (o.parts.includes('suites') && !o.fromTsv) {
    const t0 = Date.now()
    const results = await runSuites({
      register: REGISTER,
      cache: CACHE,
      only: o.suites,
      timeoutMs: o.suiteTimeoutS * 1000,
      fileTimeoutMs: o.suiteFileTimeoutS * 1000,
      jobs: o.jobs,
      outDir,
      log
    })
    writeSuitesTsv(path.join(outDir, 'suites.tsv'), results)
    summary.suites = results
    text.push(formatSuites(results) + `\n\n(suites took ${Math.round((Date.now() - t0) / 1000)} s)`)
  }

  summary.seconds = Math.round((Date.now() - started) / 1000)
  const md = `httpsys ${summary.src}, node ${process.version}\n\n` + text.join('\n\n') + `\n\nresults: ${outDir} (total ${summary.seconds} s)\n`
  fs.writeFileSync(path.join(outDir, 'summary.md'), md) // an output file, not a reference
  fs.writeFileSync(path.join(outDir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n')
  const latest = path.join(CACHE, 'results', o.wine ? 'latest-wine' : 'latest')
  try {
    fs.mkdirSync(path.dirname(latest), { recursive: true })
    fs.rmSync(latest, { force: true })
    fs.symlinkSync(outDir, latest)
  } catch {}
  process.stdout.write(md)
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`)
  process.exit(2)
})
