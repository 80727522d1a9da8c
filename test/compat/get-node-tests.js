#!/usr/bin/env node
'use strict'

// Brings node's test tree (test/parallel, test/common, test/fixtures) for
// `npm run test:compat`, from Debian's nodejs source package.
//
// node's own GitHub repository is too big to fetch here, but Debian's nodejs source
// package carries node's whole test/ folder. This picks the version of it nearest to
// the node that runs this script (same major first), downloads it with
// `apt-get source --download-only`, unpacks test/ under ~/.cache/httpsys-compat, applies
// the test/ parts of Debian's security patches (backports of node's own fixes, with
// their tests: closer to a newer node 20 than the bare release), and prints the folder
// to pass as NODE_SRC.
//
//   node test/compat/get-node-tests.js [--add-deb-src] [--version V] [--no-patches]
//
//   --add-deb-src  (root) write /etc/apt/sources.list.d/httpsys-compat-src.sources with
//                  deb-src lines for bookworm, trixie (+ security, updates) and sid, then
//                  apt-get update. Without it the script only says what to add.
//   --version V    a Debian version of nodejs (see `apt-cache showsrc nodejs`)
//   --no-patches   leave the tree as the upstream tarball has it

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')

const CACHE = process.env.HTTPSYS_COMPAT_CACHE || path.join(os.homedir(), '.cache', 'httpsys-compat')
const SOURCES_FILE = '/etc/apt/sources.list.d/httpsys-compat-src.sources'
const SOURCES = `Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm trixie trixie-updates sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`

function say (msg) {
  process.stderr.write(msg + '\n')
}

function fail (msg) {
  say(msg)
  process.exit(2)
}

function sh (cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts })
}

function parseArgs (argv) {
  const o = { addDebSrc: false, version: null, patches: true }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--add-deb-src') o.addDebSrc = true
    else if (argv[i] === '--version') o.version = argv[++i]
    else if (argv[i] === '--no-patches') o.patches = false
    else fail(`unknown argument: ${argv[i]}`)
  }
  return o
}

/** Debian's source versions of nodejs, from apt's lists (needs deb-src lines). */
function sourceVersions () {
  let out = ''
  try {
    out = sh('apt-cache', ['showsrc', 'nodejs'])
  } catch {}
  const versions = new Set()
  for (const m of out.matchAll(/^Version: (\S+)$/gm)) versions.add(m[1])
  return [...versions]
}

/** "20.19.2+dfsg-1+deb13u3" -> [20, 19, 2] */
function upstream (v) {
  const m = v.match(/^(?:\d+:)?(\d+)\.(\d+)\.(\d+)/)
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null
}

/** Same major as the running node first, then the nearest minor.patch. */
function nearest (versions, running) {
  const want = upstream(running.replace(/^v/, ''))
  const score = (v) => {
    const u = upstream(v)
    if (!u) return Infinity
    return Math.abs(u[0] - want[0]) * 1e6 + Math.abs((u[1] * 1000 + u[2]) - (want[1] * 1000 + want[2]))
  }
  return versions.slice().sort((a, b) => score(a) - score(b) || (a < b ? 1 : -1))[0]
}

function ensureSources (o) {
  let versions = sourceVersions()
  if (versions.length > 0) return versions
  if (!o.addDebSrc) {
    fail(`apt knows no source package nodejs: it needs deb-src lines. As root, run this script with
--add-deb-src, or write ${SOURCES_FILE} yourself:

${SOURCES}
then apt-get update and run this again.`)
  }
  if (process.getuid && process.getuid() !== 0) fail('--add-deb-src needs root')
  fs.writeFileSync(SOURCES_FILE, SOURCES)
  say(`wrote ${SOURCES_FILE}; apt-get update`)
  spawnSync('apt-get', ['update'], { stdio: 'inherit' })
  versions = sourceVersions()
  if (versions.length === 0) fail('apt still knows no source package nodejs')
  return versions
}

/**
 * apt-get source --download-only. Some mirrors serve the tarballs but not the .dsc
 * (404): what is needed is the .orig tarball (node's tree) and the .debian tarball
 * (the patches), so a failed .dsc is tolerated.
 */
function download (version, dir) {
  fs.mkdirSync(dir, { recursive: true })
  const up = version.replace(/^\d+:/, '').replace(/-[^-]+$/, '')
  const find = () => {
    const files = fs.readdirSync(dir)
    return {
      orig: files.find((f) => f === `nodejs_${up}.orig.tar.xz` || f === `nodejs_${up}.orig.tar.gz`),
      deb: files.find((f) => f.startsWith(`nodejs_${version.replace(/^\d+:/, '')}.debian.tar`))
    }
  }
  // by version first, then from each suite that lists it (a suite's mirror may have
  // files another lacks)
  const tries = [`nodejs=${version}`, ...suitesOffering(version).map((s) => `nodejs/${s}`)]
  let r = null
  let got = find()
  for (const spec of tries) {
    if (got.orig && got.deb) break
    r = spawnSync('apt-get', ['source', '--download-only', spec], { cwd: dir, encoding: 'utf8' })
    got = find()
  }
  if (!got.orig) fail(`apt-get source did not bring nodejs_${up}.orig.tar.*:\n${r ? r.stdout + r.stderr : ''}`)
  if (r && r.status !== 0) say(`(apt-get source exited ${r.status}; using what it downloaded: ${[got.orig, got.deb].filter(Boolean).join(', ')})`)
  return { orig: path.join(dir, got.orig), deb: got.deb ? path.join(dir, got.deb) : null }
}

/** The suites (trixie, trixie-security, ...) whose source lists carry that version. */
function suitesOffering (version) {
  let out = ''
  try {
    out = sh('apt-cache', ['madison', 'nodejs'])
  } catch {}
  const suites = []
  for (const line of out.split('\n')) {
    const f = line.split('|').map((x) => x.trim())
    if (f.length === 3 && f[1] === version && /Sources$/.test(f[2])) {
      const suite = f[2].split(/\s+/)[1]
      if (suite) suites.push(suite.split('/')[0])
    }
  }
  return suites
}

/** The test/ hunks of a patch: sections whose target path starts with test/. */
function testParts (text) {
  const lines = text.split('\n')
  const sections = []
  let cur = null
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]
    const fileStart = l.startsWith('diff --git ') ||
      (l.startsWith('--- ') && (lines[i + 1] || '').startsWith('+++ ') && (cur === null || cur.target !== null))
    if (fileStart && !(l.startsWith('--- ') && cur !== null && cur.target === null && cur.gitHeader)) {
      cur = { lines: [], target: null, gitHeader: l.startsWith('diff --git ') }
      sections.push(cur)
    }
    if (cur === null) continue
    cur.lines.push(l)
    if (l.startsWith('+++ ') && cur.target === null) {
      const p = l.slice(4).split('\t')[0].trim()
      cur.target = p.replace(/^[^/]+\//, '')
    }
  }
  return sections.filter((s) => s.target !== null && s.target.startsWith('test/')).map((s) => s.lines.join('\n')).join('\n')
}

function applyPatches (debTar, root) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-compat-deb-'))
  try {
    sh('tar', ['-xf', debTar, '-C', dir])
    const pdir = path.join(dir, 'debian', 'patches')
    const series = fs.readFileSync(path.join(pdir, 'series'), 'utf8').split('\n')
      .map((l) => l.replace(/#.*/, '').trim()).filter(Boolean)
    const applied = []
    const failed = []
    for (const name of series) {
      const part = testParts(fs.readFileSync(path.join(pdir, name.split(/\s+/)[0]), 'utf8'))
      if (part.trim() === '') continue
      const r = spawnSync('patch', ['-p1', '--forward', '--batch', '-s', '-r', '-', '--no-backup-if-mismatch'], { cwd: root, input: part + '\n', encoding: 'utf8' })
      if (r.status === 0) applied.push(name)
      else failed.push(name)
    }
    return { applied, failed }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function main () {
  const o = parseArgs(process.argv.slice(2))
  const versions = ensureSources(o)
  const version = o.version || nearest(versions, process.version)
  if (!versions.includes(version)) fail(`no nodejs source ${version}; apt has: ${versions.join(', ')}`)
  say(`node here: ${process.version}; Debian nodejs sources: ${versions.join(', ')}; taking ${version}`)
  const dl = download(version, path.join(CACHE, 'debian'))
  const up = upstream(version).join('.')
  const root = path.join(CACHE, `node-v${up}`)
  fs.rmSync(path.join(root, 'test'), { recursive: true, force: true })
  fs.mkdirSync(CACHE, { recursive: true })
  say(`unpacking node-v${up}/test from ${path.basename(dl.orig)}`)
  sh('tar', ['-xf', dl.orig, '-C', CACHE, `node-v${up}/test`])
  if (!fs.existsSync(path.join(root, 'test', 'common', 'index.js'))) fail(`${root}/test/common is missing from the tarball`)
  let note = ''
  if (o.patches && dl.deb) {
    const { applied, failed } = applyPatches(dl.deb, root)
    note = `; test/ parts of ${applied.length} Debian patches applied` + (failed.length ? `, ${failed.length} did not apply (${failed.join(', ')})` : '')
    say(note.slice(2))
  }
  fs.writeFileSync(path.join(root, '.compat-source'), `v${up} (Debian nodejs ${version}${note})\n`)
  say(`done: NODE_SRC=${root} npm run test:compat`)
  process.stdout.write(root + '\n')
}

if (require.main === module) main()

module.exports = { nearest, upstream, testParts }
