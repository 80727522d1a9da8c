'use strict'

// The single executable (docs/single-executable.md) on this Windows: httpsys-win-x64.exe
// writes the addon it carries to its cache folder, loads it, and serves an app through
// HTTP.SYS. The executable is HTTPSYS_HOST_EXE, else dist/httpsys-win-x64.exe, else it is
// built now (npm run build:exe for win-x64, which needs the node it pins: this one's
// binary is its base).

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const EXE = 'httpsys-win-x64.exe'

/** The executable to test: given, built before, or built now. */
async function executable (t) {
  const h = t.host
  if (process.env.HTTPSYS_HOST_EXE) return process.env.HTTPSYS_HOST_EXE
  const built = path.join(h.ROOT, 'dist', EXE)
  if (fs.existsSync(built)) return built
  if (t.wine) t.skip(`dist/${EXE} is not built (npm run build:exe makes it on Linux; test/exe/run.sh runs it under Wine)`)
  const script = path.join(h.ROOT, 'scripts', 'build-exe.js')
  const pinned = (/const NODE_VERSION = '([\d.]+)'/.exec(fs.readFileSync(script, 'utf8')) || [])[1]
  if (process.versions.node !== pinned || process.arch !== 'x64') {
    throw new Error(`dist/${EXE} is not built, and build:exe needs node ${pinned} x64 (this is ${process.version} ${process.arch}): ` +
      `run it with that node, or set HTTPSYS_HOST_EXE to an ${EXE}`)
  }
  // build-exe takes node's Windows binary from its cache: this node.exe is that binary
  const cache = h.scratch('exe-build-cache')
  fs.mkdirSync(cache, { recursive: true })
  fs.copyFileSync(process.execPath, path.join(cache, `node-${pinned}-win-x64.exe`))
  const addon = path.join(h.ROOT, 'prebuilds', 'win32-x64', 'httpsys_native.node')
  if (!fs.existsSync(addon)) {
    fs.mkdirSync(path.dirname(addon), { recursive: true })
    fs.copyFileSync(h.addonPath, addon)
    t.cleanup(`remove ${addon} (copied from ${h.addonPath} for the build)`, () => fs.rmSync(addon, { force: true }))
  }
  const r = await h.run(process.execPath, [script, '--targets', 'win-x64'], { env: { HTTPSYS_EXE_CACHE: cache }, timeout: 600000 })
  if (r.code !== 0) throw new Error(`npm run build:exe -- --targets win-x64 exited ${r.code}:\n${r.output}`)
  t.note(`built dist/${EXE} (it stays there)`)
  return built
}

module.exports = {
  group: 'single executable',
  checks: [
    {
      name: `${EXE} loads the addon it carries and serves through HTTP.SYS`,
      timeout: 720000,
      async run (t) {
        const h = t.host
        const exe = await executable(t)
        const cache = h.scratch('exe-cache')
        fs.mkdirSync(cache, { recursive: true })
        const port = await h.freePort()
        const sup = h.startSupervisor(t, 'exe', [path.join(h.APPS, 'host-app.js'), '-u', `http://+:${port}/`, '--backend', 'httpsys'],
          { exe, env: { HTTPSYS_CACHE_DIR: cache, HOST_APP: 'exe' } })
        const backend = await sup.waitRecord((r) => r.event === 'backend', 'the backend record', { timeout: 60000 })
        assert.equal(backend.backend, 'httpsys', backend.msg)
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready', { timeout: 60000 })
        const res = await h.getJson(`http://127.0.0.1:${port}/x`)
        assert.equal(res.app, 'exe')
        const written = fs.readdirSync(cache).flatMap((d) => fs.readdirSync(path.join(cache, d)))
        assert.ok(written.includes('httpsys_native.node'), `the executable did not write its addon to ${cache}: ${written.join(', ')}`)
        await sup.stop()
      }
    }
  ]
}
