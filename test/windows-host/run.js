'use strict'

// npm run test:windows-host: the checks test/windows/README.md lists for a real Windows,
// automated, against this machine's HTTP.SYS. Run it from an elevated prompt on Windows
// 10/11 or Server 2019 and later, in a checkout after `npm install`:
//
//   npm run test:windows-host [-- --only <regex>] [-- --list]
//
// One line per check (ok / FAIL / skip), in the order below, then `N skipped` and
// `N passed, N failed`; exit 0 only when nothing failed. Everything a check creates
// (URL reservations, certificate bindings, certificates, services, processes) is undone
// when it ends, pass or fail, and on Ctrl+C. Logs of every process: build/windows-host/.
//
// Under Wine (test/windows/run.sh runs it there through test/windows-host/under-wine.js)
// the checks Wine cannot do are reported as skipped, with the reason, never as passed.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createHarness } = require('./lib/harness')
const { createHost, ROOT } = require('./lib/host')

// the order of the run: what later groups share (the certificate binding) is made by
// the first group that needs it
const GROUPS = ['addon', 'routing', 'native-router', 'urlacl', 'tls', 'h2', 'client-certs', 'auth', 'unelevated', 'cache', 'download', 'slowloris', 'service', 'exe']

function print (line) {
  fs.writeSync(1, line + '\n')
}

function parseArgs (argv) {
  const out = { only: null, list: false }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') out.only = new RegExp(argv[++i], 'i')
    else if (argv[i] === '--list') out.list = true
    else {
      print(`usage: node test/windows-host/run.js [--only <regex>] [--list]; unknown argument ${argv[i]}`)
      process.exit(2)
    }
  }
  return out
}

function groups () {
  return GROUPS.map((name) => require(`./${name}`))
}

/** The addon as src/queue/httpsys loads it, built with node-gyp (MSVC) if the checkout has none. */
function loadAddon (logDir) {
  const loader = require(path.join(ROOT, 'src', 'httpsys', 'loader.js'))
  const found = () => loader.candidates().find((f) => fs.existsSync(f))
  try {
    return { addon: loader.load(), file: found() }
  } catch (err) {
    if (process.platform !== 'win32' || process.env.HTTPSYS_NATIVE_PATH) throw err
  }
  // npm run sets npm_config_node_gyp to the node-gyp npm carries
  const gyp = process.env.npm_config_node_gyp ||
    path.join(path.dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
  const log = path.join(logDir, 'node-gyp.log')
  print(`the checkout has no addon: node-gyp rebuild (MSVC), log in ${log}`)
  const r = spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: ROOT, encoding: 'utf8', windowsHide: true })
  fs.writeFileSync(log, (r.stdout || '') + (r.stderr || '') + (r.error ? r.error.message : ''))
  if (r.status !== 0) throw new Error(`node-gyp rebuild exited ${r.status} (log: ${log}); build the addon (npx node-gyp rebuild) and run again`)
  return { addon: loader.load(), file: found() }
}

function fail (message) {
  print(`FAIL  0 ${message}`)
  print('0 skipped')
  print('0 passed, 1 failed')
  process.exit(1)
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  if (args.list) {
    for (const { group, checks } of groups()) for (const c of checks) print(`${group}: ${c.name}${c.wine ? `  [Wine: ${c.wine}]` : ''}`)
    return
  }
  if (process.platform !== 'win32') {
    fail(`test:windows-host runs on Windows (elevated), or in Windows node.exe under Wine (test/windows/run.sh); this is ${process.platform}`)
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const logDir = path.join(ROOT, 'build', 'windows-host', stamp)
  fs.mkdirSync(logDir, { recursive: true })
  let loaded
  try {
    loaded = loadAddon(logDir)
  } catch (err) {
    fail(`the addon does not load: ${err.message}`)
  }
  const platform = loaded.addon.platform()
  const wine = platform.wine || null
  const elevated = loaded.addon.isElevated()
  if (!wine && elevated !== true) {
    fail('this prompt is not elevated: run `npm run test:windows-host` from an elevated prompt (Run as administrator); ' +
      'it makes and removes URL reservations, certificate bindings and a service, which need one')
  }
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-windows-host-'))
  const host = createHost({ wine, logDir, tmpDir })
  Object.assign(host, { platform, addonPath: loaded.file, addon: loaded.addon })

  const harness = createHarness({ print, wine, context: host, only: args.only })
  // registered first, so undone last
  harness.cleanupAtEnd(`remove the scratch folder ${tmpDir}`, () => fs.rmSync(tmpDir, { recursive: true, force: true }))
  const where = wine ? `Wine ${wine}` : `Windows ${os.release()} (build ${host.windowsBuild()})`
  print(`httpsys test:windows-host on ${where}, node ${process.version}, ${elevated ? 'elevated' : 'not elevated'}; logs in ${logDir}`)

  const interrupt = (why) => {
    const counts = harness.interrupt(why)
    process.exit(counts.failed === 0 && counts.passed > 0 ? 0 : 1)
  }
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGBREAK', 'SIGHUP']) process.on(signal, () => interrupt(signal))
  // an exit nobody planned (process.exit in a dependency): still undo, synchronously
  process.on('exit', () => harness.interrupt('exit'))
  process.on('uncaughtException', (err) => {
    print(`FAIL    uncaught: ${err && err.stack ? err.stack : err}`)
    interrupt('an uncaught exception')
  })

  const counts = await harness.run(groups())
  process.exit(counts.failed === 0 && counts.passed > 0 ? 0 : 1)
}

main()
