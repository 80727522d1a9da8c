'use strict'

// node's own test/parallel/test-http-*.js, each run twice: on node's http stack, then
// with the preload. A run passes when it exits 0 within the timeout (what node's
// tools/test.py checks for a parallel test); a test that prints "1..0 # Skipped" is a
// skip.

const fs = require('node:fs')
const path = require('node:path')
const { runProcess, pool } = require('./proc')
const { runWine, winPath } = require('./wine')

const FILE_RE = /^test-http-.*\.(js|mjs|cjs)$/
const CLIENT_RE = /^test-http-(client|agent)-/
const REPORT_ON_TERM = path.join(__dirname, 'report-on-term.js')

/** The test tree's root (the folder holding test/parallel and test/common). */
function checkTree (nodeSrc) {
  const parallel = path.join(nodeSrc, 'test', 'parallel')
  const common = path.join(nodeSrc, 'test', 'common', 'index.js')
  if (!fs.existsSync(parallel) || !fs.existsSync(common)) {
    throw new Error(`${nodeSrc} is not a node source tree: it needs test/parallel and test/common/index.js`)
  }
  return { parallel }
}

/** The version of the tree: what get-node-tests.js recorded, src/node_version.h, or the folder name. */
function treeVersion (nodeSrc) {
  // get-node-tests.js says where the tree came from
  try {
    const v = fs.readFileSync(path.join(nodeSrc, '.compat-source'), 'utf8').trim()
    if (v) return v
  } catch {}
  try {
    const h = fs.readFileSync(path.join(nodeSrc, 'src', 'node_version.h'), 'utf8')
    const get = (n) => (h.match(new RegExp('#define NODE_' + n + '_VERSION (\\d+)')) || [])[1]
    if (get('MAJOR')) return `v${get('MAJOR')}.${get('MINOR')}.${get('PATCH')}`
  } catch {}
  const m = path.basename(path.resolve(nodeSrc)).match(/v?(\d+\.\d+\.\d+)/)
  return m ? 'v' + m[1] : 'unknown'
}

/** test/common's own rule: the first `// Flags: --...` line within the first 1500 bytes. */
function flagsOf (file) {
  const fd = fs.openSync(file, 'r')
  const buf = Buffer.alloc(1500)
  const n = fs.readSync(fd, buf, 0, buf.length, 0)
  fs.closeSync(fd)
  const source = buf.toString('utf8', 0, n)
  const at = source.search(/\/\/ Flags:\s+--/)
  if (at === -1) return []
  const start = at + 10
  let end = source.indexOf('\n', start)
  if (end === -1) end = source.length
  return source.slice(start, end).replace(/\r$/, '').split(/\s+/).filter(Boolean)
}

/**
 * parallel.status entries that apply here (sections [true] and [$system==<platform>]):
 * name -> 'SKIP' | 'FLAKY' | ...
 */
function statusOf (parallel) {
  const out = new Map()
  let text
  try {
    text = fs.readFileSync(path.join(parallel, 'parallel.status'), 'utf8')
  } catch {
    return out
  }
  const system = process.platform === 'darwin' ? 'macos' : process.platform
  let applies = false
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim()
    if (line === '') continue
    const section = line.match(/^\[(.*)\]$/)
    if (section) {
      const cond = section[1].trim()
      applies = cond === 'true' || cond === `$system==${system}`
      continue
    }
    if (!applies) continue
    const m = line.match(/^([\w-]+)\s*:\s*(.*)$/)
    if (m) out.set(m[1], m[2].replace(/\s+/g, ''))
  }
  return out
}

function listFiles (parallel, filter) {
  return fs.readdirSync(parallel)
    .filter((f) => FILE_RE.test(f))
    .filter((f) => !filter || filter.test(f))
    .sort()
}

function kindOf (file) {
  return CLIENT_RE.test(file) ? 'client' : 'server'
}

// The first line that says what went wrong, for the TSV.
function errorLine (r) {
  const lines = (r.stderr + '\n' + r.stdout).split('\n').map((l) => l.trim()).filter(Boolean)
  const pick = lines.find((l) => /^(Uncaught )?(\w*Error\b|Error \[|AssertionError|Mismatched|node:internal\/|TypeError|RangeError)/.test(l) && !/^node:internal\/.*:\d+$/.test(l)) ||
    lines.find((l) => /Error|must|Mismatched|Expected|assert/i.test(l)) ||
    lines[lines.length - 1] || (r.signal ? 'signal ' + r.signal : 'exit ' + r.code)
  return ((r.timedOut ? 'timeout: ' : '') + pick).replace(/\t/g, ' ').slice(0, 200)
}

function outcome (r) {
  if (r.timedOut) return 'timeout'
  if (r.code === 0) return /^1\.\.0 # Skipped/m.test(r.stdout) ? 'skip' : 'pass'
  return 'fail'
}

/**
 * Runs the tests; returns one row per file.
 * @param {object} o { nodeSrc, register, jobs, timeoutMs, filter, baselineFrom (Map|null), log,
 *   wine (wine.js wineSetup(): run node.exe under Wine, the preload on HTTP.SYS) }
 */
async function runNodeTests (o) {
  const { parallel } = checkTree(o.nodeSrc)
  const status = statusOf(parallel)
  const files = listFiles(parallel, o.filter)
  const rows = files.map((file) => ({
    file,
    kind: kindOf(file),
    flags: flagsOf(path.join(parallel, file)),
    status: status.get(file.replace(/\.(m|c)?js$/, '')) || '',
    baseline: null,
    baselineMs: 0,
    baselineError: '',
    preload: null,
    preloadMs: 0,
    preloadError: ''
  }))

  const tasks = []
  for (const row of rows) {
    if (row.status === 'SKIP') {
      row.baseline = row.preload = 'skip'
      continue
    }
    const reused = o.baselineFrom ? o.baselineFrom.get(row.file) : undefined
    if (reused) {
      row.baseline = reused.baseline
      row.baselineMs = reused.baselineMs
      row.baselineError = reused.baselineError
    } else {
      tasks.push((slot) => runOne(o, row, slot, false))
    }
    tasks.push((slot) => runOne(o, row, slot, true))
  }
  let done = 0
  await pool(tasks, o.jobs, () => {
    done++
    if (o.log && (done % 50 === 0 || done === tasks.length)) o.log(`node tests: ${done}/${tasks.length} runs`)
  })
  return rows
}

async function runOne (o, row, slot, withPreload) {
  const file = path.join('test', 'parallel', row.file)
  let r
  if (o.wine) {
    // node.exe under Wine (wine.js): Windows paths for what node.exe loads, the preload
    // on HTTP.SYS; no SIGTERM report (Wine has no signals for node.exe to catch)
    const env = { ...testEnv(slot, withPreload ? winPath(o.register) : null), ...o.wine.env }
    r = await runWine(o.wine.nodeExe, [...row.flags, file], { cwd: o.nodeSrc, env, timeoutMs: o.timeoutMs })
  } else {
    const env = testEnv(slot, withPreload ? o.register : null)
    r = await runProcess(process.execPath, [...row.flags, '--require', REPORT_ON_TERM, file], {
      cwd: o.nodeSrc,
      env,
      timeoutMs: o.timeoutMs,
      termGraceMs: 2000
    })
  }
  const result = outcome(r)
  const err = result === 'pass' || result === 'skip' ? '' : errorLine(r)
  if (withPreload) {
    row.preload = result
    row.preloadMs = r.ms
    row.preloadError = err
  } else {
    row.baseline = result
    row.baselineMs = r.ms
    row.baselineError = err
  }
  if (o.keepOutput) {
    const dir = path.join(o.outDir, 'output', withPreload ? 'preload' : 'baseline')
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, row.file + '.txt'),
      `exit ${r.code} signal ${r.signal} timedOut ${r.timedOut} ${r.ms} ms\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}\n`)
  }
}

/**
 * The environment of a test process: this one's without anything that would change
 * node's or httpsys's behaviour, a tmpdir and a common.PORT of its own per slot (what
 * tools/test.py gives each of its jobs), and the preload in NODE_OPTIONS so that child
 * processes the test spawns get it too.
 */
function testEnv (slot, register) {
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_OPTIONS' || k.startsWith('HTTPSYS_') || k.startsWith('NODE_TEST') || k === 'NODE_CHANNEL_FD') continue
    if (k.startsWith('npm_') || k === 'INIT_CWD') continue
    env[k] = v
  }
  env.TEST_THREAD_ID = String(slot + 1)
  env.NODE_COMMON_PORT = String(12346 + 1000 * (slot + 1))
  if (register) {
    env.NODE_OPTIONS = `--require ${quoteOption(register)}`
    // which router the preload runs (issue 25: HTTPSYS_ROUTER=native and the binary)
    for (const k of ['HTTPSYS_ROUTER', 'HTTPSYS_ROUTER_PATH']) if (process.env[k] !== undefined) env[k] = process.env[k]
  }
  return env
}

// NODE_OPTIONS splits on spaces; a path with spaces is double-quoted
function quoteOption (p) {
  return /[\s"\\]/.test(p) ? '"' + p.replace(/(["\\])/g, '\\$1') + '"' : p
}

module.exports = { runNodeTests, treeVersion, flagsOf, statusOf, kindOf, testEnv, CLIENT_RE }
