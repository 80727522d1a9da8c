'use strict'

// koa's, fastify's and express's own test suites (suites.json), each run on node's
// stack and then through the preload (NODE_OPTIONS=--require src/register.js, so the
// test runner's child processes get it). Sources come from a git snapshot of the
// repository at the pinned commit, unpacked and npm-installed once under the cache.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { runProcess, pool } = require('./proc')
const { testEnv } = require('./node-tests')

const MIRRORS = process.env.HTTPSYS_COMPAT_MIRRORS || '/work/.mirror'
const KEEP = 4 * 1024 * 1024

function loadSuites () {
  const all = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'suites.json'), 'utf8'))
  delete all.$comment
  return all
}

/**
 * The suite's source folder, unpacked and installed. Returns { dir } or { problem }.
 */
function prepare (name, suite, cache, log) {
  const envSrc = process.env[name.toUpperCase() + '_SRC']
  let dir
  if (envSrc) {
    dir = path.resolve(envSrc)
    const pkg = readJson(path.join(dir, 'package.json'))
    if (!pkg) return { problem: `${name.toUpperCase()}_SRC=${dir} has no package.json` }
    if ('v' + pkg.version !== suite.tag) log(`${name}: ${dir} is ${pkg.version}, suites.json pins ${suite.tag}`)
  } else {
    dir = path.join(cache, 'suites', `${name}-${suite.tag}`)
    if (!fs.existsSync(path.join(dir, '.compat-commit'))) {
      const gitDir = path.join(MIRRORS, suite.repo.replace('/', '+'), 'repo')
      if (!fs.existsSync(gitDir)) {
        return {
          problem: `no source for ${name}: set ${name.toUpperCase()}_SRC to a checkout of ${suite.repo} ${suite.tag} ` +
            `(git clone --depth 1 --branch ${suite.tag} https://github.com/${suite.repo}), or bring a snapshot to ${gitDir}`
        }
      }
      const has = spawnSync('git', ['--git-dir', gitDir, 'cat-file', '-e', suite.commit + '^{commit}'])
      if (has.status !== 0) return { problem: `${gitDir} lacks ${suite.commit} (${suite.tag}): fetch a newer snapshot` }
      fs.rmSync(dir, { recursive: true, force: true })
      fs.mkdirSync(dir, { recursive: true })
      log(`${name}: unpacking ${suite.repo} ${suite.tag} into ${dir}`)
      const archive = spawnSync('sh', ['-c', 'git --git-dir "$1" archive "$2" | tar -x -C "$3"', 'sh', gitDir, suite.commit, dir])
      if (archive.status !== 0) return { problem: `git archive failed: ${archive.stderr}` }
      fs.writeFileSync(path.join(dir, '.compat-commit'), suite.commit + '\n')
    }
  }
  if (!fs.existsSync(path.join(dir, 'node_modules', '.compat-installed'))) {
    log(`${name}: npm install (devDependencies) in ${dir}`)
    const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir, stdio: ['ignore', 'inherit', 'inherit'], env: testEnv(0, null)
    })
    if (npm.status !== 0) return { problem: `npm install failed in ${dir}` }
    fs.writeFileSync(path.join(dir, 'node_modules', '.compat-installed'), new Date().toISOString() + '\n')
  }
  return { dir }
}

function readJson (file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch {
    return null
  }
}

function walk (dir, rel = '', out = []) {
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue
    const p = rel ? rel + '/' + e.name : e.name
    if (e.isDirectory()) walk(dir, p, out)
    else out.push(p)
  }
  return out
}

function testFiles (dir, suite) {
  const re = new RegExp(suite.files)
  const containing = suite.containing ? new RegExp(suite.containing) : null
  return walk(dir).filter((f) => re.test(f))
    .filter((f) => !containing || containing.test(fs.readFileSync(path.join(dir, f), 'utf8')))
    .sort()
}

/**
 * The leaf tests of a TAP stream, as they were reported (a run cut short by its timeout
 * still has the ones that finished): [{ name, ok, skip }]. node's TAP reporter prints
 * "# Subtest: name" before a test's children and the test's own "ok N - name" after
 * them, indented 4 spaces a level; mocha's TAP is flat.
 */
function parseTap (text, prefix = '') {
  const leaves = []
  const stack = []
  const children = []
  for (const line of text.split('\n')) {
    const sub = line.match(/^(\s*)# Subtest: (.*)$/)
    if (sub) {
      const d = Math.floor(sub[1].length / 4)
      stack.length = d
      stack[d] = sub[2]
      continue
    }
    const m = line.match(/^(\s*)(not ok|ok) \d+(?: -)? ?(.*?)(?:\s+#\s+(SKIP|TODO)\b.*)?$/)
    if (!m) continue
    const d = Math.floor(m[1].length / 4)
    const leaf = !(children[d + 1] > 0)
    children[d + 1] = 0
    children[d] = (children[d] || 0) + 1
    if (!leaf) continue
    stack.length = d
    stack[d] = m[3]
    leaves.push({ name: prefix + stack.join(' > '), ok: m[2] === 'ok', skip: Boolean(m[4]) })
  }
  return leaves
}

/** One run of a suite (baseline or preload): per file for node:test suites, whole for mocha. */
async function runSuite (name, dir, suite, register, o) {
  const which = register ? 'preload' : 'baseline'
  const env = suiteEnv(register)
  const started = Date.now()
  const tapFile = path.join(o.outDir, `${name}.${which}.tap`)
  fs.writeFileSync(tapFile, '')
  let leaves = []
  const timedOut = []
  if (suite.runner === 'mocha') {
    const mocha = path.join(dir, 'node_modules', 'mocha', 'bin', 'mocha.js')
    // --exit: a server the preload left listening must not keep mocha from reporting
    const r = await runProcess(process.execPath, [mocha, '--reporter', 'tap', '--exit', ...suite.args], { cwd: dir, env, timeoutMs: o.timeoutMs, keep: KEEP })
    fs.appendFileSync(tapFile, r.stdout + '\n--- stderr\n' + r.stderr)
    leaves = parseTap(r.stdout)
    if (r.timedOut) timedOut.push('(the whole run)')
  } else {
    const files = testFiles(dir, suite)
    await pool(files.map((file) => async () => {
      // the file run by itself: its TAP streams as tests finish, so a file whose
      // process never exits (a server left listening) still reports what ran
      const r = await runProcess(process.execPath, ['--test-reporter=tap', file], { cwd: dir, env, timeoutMs: o.fileTimeoutMs, keep: KEEP })
      fs.appendFileSync(tapFile, `### ${file} exit ${r.code} ${r.timedOut ? 'TIMEOUT ' : ''}${r.ms} ms\n${r.stdout}\n--- stderr\n${r.stderr.slice(-2000)}\n`)
      leaves.push(...parseTap(r.stdout, file + ' > '))
      if (r.timedOut) timedOut.push(file)
    }), o.jobs)
  }
  return { leaves, timedOut, seconds: Math.round((Date.now() - started) / 1000) }
}

function suiteEnv (register) {
  const env = testEnv(0, register)
  delete env.TEST_THREAD_ID
  delete env.NODE_COMMON_PORT
  return env
}

function counts (leaves) {
  return {
    pass: leaves.filter((l) => l.ok && !l.skip).length,
    fail: leaves.filter((l) => !l.ok && !l.skip).length,
    skipped: leaves.filter((l) => l.skip).length
  }
}

/**
 * @param {object} o { register, cache, only, timeoutMs, fileTimeoutMs, jobs, outDir, log }
 * @returns {Promise<object[]>} one result per suite
 */
async function runSuites (o) {
  const suites = loadSuites()
  const names = o.only || Object.keys(suites)
  const results = []
  for (const name of names) {
    const suite = suites[name]
    if (!suite) {
      results.push({ name, problem: `not in suites.json (${Object.keys(suites).join(', ')})` })
      continue
    }
    const prep = prepare(name, suite, o.cache, o.log)
    if (prep.problem) {
      o.log(prep.problem)
      results.push({ name, tag: suite.tag, problem: prep.problem })
      continue
    }
    const files = suite.runner === 'mocha' ? null : testFiles(prep.dir, suite).length
    o.log(`${name} ${suite.tag}: baseline` + (files ? ` (${files} files)` : ''))
    const b = await runSuite(name, prep.dir, suite, null, o)
    o.log(`${name} ${suite.tag}: preload`)
    const p = await runSuite(name, prep.dir, suite, o.register, o)
    // a test the preload run never reported (its file timed out, or crashed before it)
    // counts as a failure
    const seen = new Set(p.leaves.map((l) => l.name))
    const missing = b.leaves.filter((l) => !seen.has(l.name)).map((l) => l.name)
    const bc = counts(b.leaves)
    const pc = counts(p.leaves)
    pc.fail += missing.length
    const failedBefore = new Set(b.leaves.filter((l) => !l.ok && !l.skip).map((l) => l.name))
    const preloadOnly = p.leaves.filter((l) => !l.ok && !l.skip && !failedBefore.has(l.name)).map((l) => l.name)
    results.push({
      name,
      tag: suite.tag,
      commit: suite.commit,
      files,
      tests: Math.max(b.leaves.length, p.leaves.length + missing.length),
      baseline: { ...bc, timedOut: b.timedOut, seconds: b.seconds },
      preload: { ...pc, notReported: missing.length, timedOut: p.timedOut, seconds: p.seconds },
      preloadOnlyFailures: [...preloadOnly, ...missing.map((m) => m + ' (not reported)')]
    })
  }
  return results
}

function formatSuites (results) {
  const out = [
    '| suite | tests | node\'s stack: pass / fail | with the preload: pass / fail | fail only with the preload |',
    '| --- | ---: | ---: | ---: | ---: |'
  ]
  for (const r of results) {
    if (r.problem) {
      out.push(`| ${r.name} ${r.tag || ''} | not run: ${r.problem} | | | |`)
      continue
    }
    const to = (x) => (x.timedOut.length ? ` (${x.timedOut.length} file${x.timedOut.length > 1 ? 's' : ''} timed out)` : '')
    out.push(`| ${r.name} ${r.tag}${r.files ? ` (${r.files} files)` : ''} | ${r.tests} | ${r.baseline.pass} / ${r.baseline.fail}${to(r.baseline)} | ` +
      `${r.preload.pass} / ${r.preload.fail}${to(r.preload)} | ${r.preloadOnlyFailures.length} |`)
  }
  for (const r of results) {
    if (r.problem || r.preloadOnlyFailures.length === 0) continue
    out.push('')
    out.push(`${r.name}: failing only with the preload (${r.preloadOnlyFailures.length}):`)
    for (const f of r.preloadOnlyFailures.slice(0, 25)) out.push(`  - ${f}`)
    if (r.preloadOnlyFailures.length > 25) out.push(`  - ... (${r.preloadOnlyFailures.length - 25} more in summary.json)`)
  }
  return out.join('\n')
}

function writeSuitesTsv (file, results) {
  const lines = ['suite\ttag\tcommit\trun\ttests\tpass\tfail\tskipped\tnot_reported\tfiles_timed_out\tseconds']
  for (const r of results) {
    if (r.problem) {
      lines.push([r.name, r.tag || '', '', 'not run', '', '', '', '', '', '', ''].join('\t'))
      continue
    }
    for (const which of ['baseline', 'preload']) {
      const x = r[which]
      lines.push([r.name, r.tag, r.commit, which, r.tests, x.pass, x.fail, x.skipped, x.notReported || 0, x.timedOut.length, x.seconds].join('\t'))
    }
  }
  fs.writeFileSync(file, lines.join('\n') + '\n')
}

module.exports = { runSuites, formatSuites, writeSuitesTsv, parseTap, testFiles, loadSuites, prepare }
