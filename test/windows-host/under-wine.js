'use strict'

// Runs `npm run test:windows-host` (run.js) in Windows node.exe under Wine, from Linux,
// as test/windows/run.sh does after its suite (it sets up Wine, node.exe and the addon).
// What Wine cannot do is skipped there; this checks that the script holds together:
// every check reported in the order run.js --list gives, each one with a Wine reason
// reported as skipped with that reason (never as passed), none failed, the summary
// lines right, no node.exe left running. Its lines are printed with a `windows-host: `
// prefix, so that run.sh's last line stays the suite's own `N passed, N failed`; the
// last one says whether this held. Exit 0 when it did.
//
//   HTTPSYS_WINE_NODE=... WINEPREFIX=... node test/windows-host/under-wine.js

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const W = require('../windows/lib/wine')

const RUN = path.join(__dirname, 'run.js')
const TIMEOUT_MS = 240000

/** run.js --list on this node: "group: name" and the Wine reason, in order. */
function expectedChecks () {
  const out = execFileSync(process.execPath, [RUN, '--list'], { encoding: 'utf8' })
  return out.split('\n').filter(Boolean).map((line) => {
    const m = /^(.*?)(?: {2}\[Wine: (.*)\])?$/.exec(line)
    return { title: m[1], wine: m[2] || null }
  })
}

/** What went wrong with a run's output, or [] when it held together. */
function problems (output, expected) {
  const lines = output.split(/\r?\n/)
  const found = []
  const bad = []
  for (const line of lines) {
    const m = /^(ok|FAIL|skip) +(\d+) (.*)$/.exec(line)
    if (!m) continue
    const [, verdict, , rest] = m
    found.push({ verdict, rest })
    if (verdict === 'FAIL') bad.push(`failed: ${rest}`)
  }
  if (found.length !== expected.length) bad.push(`${found.length} check lines, run.js --list has ${expected.length}`)
  expected.forEach((e, i) => {
    const f = found[i]
    if (!f) return
    if (!f.rest.startsWith(e.title)) bad.push(`check ${i + 1} is "${f.rest}", expected "${e.title}" (the order of run.js)`)
    else if (e.wine && !(f.verdict === 'skip' && f.rest === `${e.title}: skipped: ${e.wine}`)) bad.push(`"${e.title}" must be skipped with its reason under Wine, got: ${f.verdict} ${f.rest}`)
  })
  const summary = lines.filter(Boolean).slice(-2)
  const passed = found.filter((f) => f.verdict === 'ok').length
  const skipped = found.filter((f) => f.verdict === 'skip').length
  if (summary[0] !== `${skipped} skipped` || summary[1] !== `${passed} passed, 0 failed`) {
    bad.push(`the summary is ${JSON.stringify(summary)}, expected ["${skipped} skipped", "${passed} passed, 0 failed"]`)
  }
  return bad
}

async function main () {
  if (!W.NODE_EXE || !fs.existsSync(W.NODE_EXE)) {
    console.log('windows-host under Wine: FAIL: HTTPSYS_WINE_NODE must name a Windows node.exe (test/windows/run.sh sets it up)')
    process.exit(1)
  }
  const expected = expectedChecks()
  const started = Date.now()
  const proc = W.startNode('windows-host', [path.relative(W.ROOT, RUN)])
  const code = await W.within(proc.exited, TIMEOUT_MS)
  if (code === 'timeout') {
    proc.child.kill('SIGKILL')
    await proc.exited
  }
  const output = proc.output()
  for (const line of output.split(/\r?\n/)) if (line) console.log(`windows-host: ${line}`)
  const bad = problems(output, expected)
  if (code === 'timeout') bad.push(`it did not finish within ${TIMEOUT_MS / 1000} s`)
  else if (code !== 0) bad.push(`it exited ${code}`)
  await W.sleep(500)
  const left = W.leftovers()
  if (left.length > 0) bad.push(`node.exe left running:\n${left.join('\n')}`)
  const s = ((Date.now() - started) / 1000).toFixed(0)
  if (bad.length === 0) {
    const skipped = expected.filter((e) => e.wine).length
    console.log(`windows-host under Wine: ok (${expected.length} checks in order, ${skipped} skipped with their reason, in ${s} s)`)
    return
  }
  console.log(`windows-host under Wine: FAIL (${s} s)`)
  for (const b of bad) console.log(`  # ${b}`)
  process.exitCode = 1
}

if (require.main === module) main()

module.exports = { problems }
