'use strict'

// node's tests on HTTP.SYS: Windows node.exe under Wine, the preload forced onto the
// httpsys backend (HTTPSYS_BACKEND=httpsys, so an addon that does not load is a failure,
// never a quiet fall back to the hub) with the addon test/windows builds. The same
// node.exe test/windows runs (test/windows/run.sh fetches it and makes the Wine prefix);
// run that once first.
//
// node.exe dies on a piped stdout under Wine, so each run writes its output to files.
// What a test leaves running goes with its process group; `wineserver -k` at the end
// (finish()) ends whatever Windows processes are left in the prefix.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const REPO = path.resolve(__dirname, '..', '..', '..')
const CACHE = process.env.HTTPSYS_WINE_CACHE || path.join(os.homedir(), '.cache', 'httpsys-windows')
const VERSION = process.env.HTTPSYS_WINE_NODE_VERSION || '20.20.2'

/** A Linux path as node.exe under Wine names it (Wine maps / to Z:). */
function winPath (p) {
  return 'Z:' + path.resolve(p)
}

/**
 * What a Wine run needs, checked.
 * @returns {{nodeExe: string, addon: string, env: object}}
 * @throws {Error} saying what to run first
 */
function wineSetup () {
  const nodeExe = process.env.HTTPSYS_WINE_NODE || path.join(CACHE, `node-${VERSION}.exe`)
  const prefix = process.env.WINEPREFIX || path.join(CACHE, 'prefix')
  const addon = path.join(REPO, 'build', 'win-cross', 'httpsys_native.node')
  const missing = []
  if (spawnSync('sh', ['-c', 'command -v wine']).status !== 0) missing.push('wine')
  if (!fs.existsSync(nodeExe)) missing.push(nodeExe)
  if (!fs.existsSync(path.join(prefix, '.httpsys-ready'))) missing.push(`the Wine prefix ${prefix}`)
  if (!fs.existsSync(addon)) missing.push(addon)
  if (missing.length > 0) {
    throw new Error(`--wine needs ${missing.join(', ')}: run \`npm run test:windows\` once (it installs Wine, fetches node.exe, makes the prefix and builds the addon)`)
  }
  return {
    nodeExe,
    addon,
    env: { WINEPREFIX: prefix, WINEDEBUG: '-all', HTTPSYS_BACKEND: 'httpsys', HTTPSYS_NATIVE_PATH: winPath(addon) }
  }
}

/**
 * `wine node.exe args...`, as proc.js runProcess runs a process: the same result shape.
 * @param {string} nodeExe
 * @param {string[]} args
 * @param {{cwd: string, env: object, timeoutMs: number, keep?: number}} options
 */
function runWine (nodeExe, args, options) {
  const keep = options.keep || 4000
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-compat-wine-'))
  const outFile = path.join(dir, 'stdout')
  const errFile = path.join(dir, 'stderr')
  return new Promise((resolve) => {
    const started = Date.now()
    const out = fs.openSync(outFile, 'w')
    const err = fs.openSync(errFile, 'w')
    let child
    try {
      child = spawn('wine', [nodeExe, ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', out, err], detached: true })
    } finally {
      fs.closeSync(out)
      fs.closeSync(err)
    }
    let timedOut = false
    const kill = () => {
      try { process.kill(-child.pid, 'SIGKILL') } catch {}
    }
    const timer = setTimeout(() => {
      timedOut = true
      kill()
    }, options.timeoutMs)
    const done = (code, signal) => {
      clearTimeout(timer)
      kill()
      const read = (f) => {
        try {
          return fs.readFileSync(f, 'utf8').slice(-keep)
        } catch {
          return ''
        }
      }
      const result = { code, signal, timedOut, ms: Date.now() - started, stdout: read(outFile), stderr: read(errFile) }
      fs.rmSync(dir, { recursive: true, force: true })
      resolve(result)
    }
    child.on('error', (e) => done(null, String(e)))
    child.on('exit', done)
  })
}

/** Ends what is left of the run's Windows processes. */
function finish (setup) {
  spawnSync('wineserver', ['-k'], { env: { ...process.env, ...setup.env }, stdio: 'ignore' })
}

module.exports = { wineSetup, runWine, winPath, finish }
