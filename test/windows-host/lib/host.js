'use strict'

// What the checks do on the machine: run httpsys and Windows' own tools, start a
// supervisor in the foreground (its JSON records in a log file) and stop it again, talk
// HTTP to it, and undo everything synchronously (lib/harness.js runs cleanups from
// process.on('exit') too). Runs in Windows node.exe: on Windows, or under Wine.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { expected } = require('./harness')

const ROOT = path.join(__dirname, '..', '..', '..')
const BIN = path.join(ROOT, 'bin', 'httpsys')
const APPS = path.join(__dirname, '..', 'apps')
const STOP_MS = 30000

/**
 * @param {object} options
 * @param {string|null} options.wine the Wine version, null on Windows
 * @param {string} options.logDir where every process's output is kept (build/windows-host/...)
 * @param {string} options.tmpDir the run's scratch folder (keys, configs), removed at the end
 */
function createHost ({ wine, logDir, tmpDir }) {
  let counter = 0
  const id = () => String(++counter).padStart(2, '0')

  /**
   * Runs a program to its end; resolves with { code, stdout, stderr, output }.
   * @param {string} file
   * @param {string[]} args
   * @param {object} [options] cwd, env (added to this process's), timeout (ms)
   */
  function run (file, args, { cwd = ROOT, env = {}, timeout = 60000 } = {}) {
    return new Promise((resolve) => {
      const child = spawn(file, args, { cwd, env: { ...process.env, ...env }, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => { stdout += d })
      child.stderr.on('data', (d) => { stderr += d })
      const timer = setTimeout(() => kill(child.pid), timeout)
      child.on('error', (err) => { stderr += String(err.message) })
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr, output: stdout + stderr })
      })
    })
  }

  /** The same, synchronous (cleanups). */
  function runSync (file, args, { cwd = ROOT, env = {}, timeout = 60000 } = {}) {
    const r = spawnSync(file, args, { cwd, env: { ...process.env, ...env }, windowsHide: true, encoding: 'utf8', timeout })
    return { code: r.status, stdout: r.stdout || '', stderr: (r.stderr || '') + (r.error ? r.error.message : ''), output: (r.stdout || '') + (r.stderr || '') }
  }

  /** `httpsys <args>` from this checkout, as a second prompt would type it. */
  const httpsys = (args, options) => run(process.execPath, [BIN, ...args], options)
  const httpsysSync = (args, options) => runSync(process.execPath, [BIN, ...args], options)

  /** taskkill /T /F: the process and what it started; quiet when it is gone already. */
  function kill (pid) {
    if (!pid || !alive(pid)) return
    if (wine) {
      // Wine 8's taskkill has no /T (test/windows/README.md)
      try { process.kill(pid) } catch {}
      return
    }
    runSync('taskkill', ['/T', '/F', '/PID', String(pid)], { timeout: 20000 })
  }

  function alive (pid) {
    try {
      process.kill(pid, 0)
      return true
    } catch (err) {
      return err.code === 'EPERM'
    }
  }

  /** Sleeps synchronously (cleanups wait for a process to go). */
  function sleepSync (ms) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
  }

  /**
   * `httpsys start <args> --json` in the foreground, its records in a log file, stopped
   * (`httpsys stop all`, then killed) by a cleanup of the check that started it.
   * @param {object} t the check (lib/harness.js)
   * @param {string} name names its log file and runtime directory
   * @param {string[]} args after `start`
   * @param {object} [options] cwd, env; forGroup: stopped after the group's last check
   *   (the group's checks share it), not after this one; exe: a single executable to
   *   run instead of this node with bin/httpsys
   */
  function startSupervisor (t, name, args, { cwd = ROOT, env = {}, forGroup = false, exe = null } = {}) {
    const command = exe ? [exe] : [process.execPath, BIN]
    const tag = `${id()}-${name}`
    const runtime = path.join(tmpDir, `runtime-${tag}`)
    fs.mkdirSync(runtime, { recursive: true })
    const log = path.join(logDir, `${tag}.log`)
    const fd = fs.openSync(log, 'w')
    const fullEnv = { HTTPSYS_RUNTIME_DIR: runtime, ...env }
    const child = spawn(command[0], [...command.slice(1), 'start', ...args, '--json'], {
      cwd, env: { ...process.env, ...fullEnv }, windowsHide: true, stdio: ['ignore', fd, fd]
    })
    fs.closeSync(fd)
    let exitCode = null
    const exited = new Promise((resolve) => child.once('exit', (code) => { exitCode = code; resolve(code) }))
    const sup = {
      name: tag,
      pid: child.pid,
      log,
      env: fullEnv,
      exited,
      get exitCode () { return exitCode },
      output: () => fs.readFileSync(log, 'utf8'),
      records: () => parseRecords(fs.readFileSync(log, 'utf8')),
      /** `httpsys <args>` aimed at this supervisor (its runtime directory and folder) */
      httpsys: (more, options = {}) => run(command[0], [...command.slice(1), ...more], { cwd, ...options, env: { ...fullEnv, ...options.env } }),
      /** the first record matching `match` (and any after it, with `after`) */
      async waitRecord (match, what, { timeout = STOP_MS, after = 0 } = {}) {
        const end = Date.now() + timeout
        for (;;) {
          const found = sup.records().slice(after).find(match)
          if (found) return found
          if (exitCode !== null) throw expected(`${tag}: exited (code ${exitCode}) before ${what}:\n${tail(sup.output())}`)
          if (Date.now() > end) throw expected(`${tag}: no ${what} within ${timeout / 1000} s:\n${tail(sup.output())}`)
          await sleep(100)
        }
      },
      /** `httpsys stop all`, and its exit within the stop timeout */
      async stop () {
        const r = await sup.httpsys(['stop', 'all'])
        if (r.code !== 0) throw expected(`httpsys stop all exited ${r.code}:\n${r.output}`)
        const code = await within(exited, STOP_MS)
        if (code === 'timeout') throw expected(`${tag} did not exit within ${STOP_MS / 1000} s of httpsys stop all:\n${tail(sup.output())}`)
        return code
      }
    }
    const register = forGroup ? t.cleanupAfterGroup : t.cleanup
    register(`stop the supervisor ${tag} (pid ${child.pid})`, () => {
      if (exitCode !== null || !alive(child.pid)) return
      runSync(command[0], [...command.slice(1), 'stop', 'all'], { cwd, env: fullEnv, timeout: STOP_MS })
      const end = Date.now() + STOP_MS
      while (alive(child.pid) && Date.now() < end) sleepSync(200)
      kill(child.pid)
      if (alive(child.pid)) throw new Error(`pid ${child.pid} is still running after taskkill`)
    })
    return sup
  }

  /** The pids of an app's workers that are ready now, from the supervisor's records. */
  function readyPids (sup, app) {
    const live = new Map()
    for (const r of sup.records()) {
      if (r.app !== app || !r.pid) continue
      if (r.event === 'ready') live.set(`${r.inst}`, r.pid)
      if (r.event === 'exit' && live.get(`${r.inst}`) === r.pid) live.delete(`${r.inst}`)
    }
    return [...live.values()]
  }

  /**
   * One request; resolves with { status, headers, body: Buffer, ms }.
   * @param {string} url
   * @param {object} [options] method, headers, body, timeout (ms), and for https: ca,
   *   cert, key, servername, minVersion
   */
  function request (url, { method = 'GET', headers = {}, body, timeout = 10000, ...tls } = {}) {
    const u = new URL(url)
    const mod = u.protocol === 'https:' ? https : http
    const started = Date.now()
    return new Promise((resolve, reject) => {
      const req = mod.request(u, { method, headers, agent: false, ...tls }, (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), ms: Date.now() - started, socket: res.socket }))
        res.on('error', reject)
      })
      req.setTimeout(timeout, () => req.destroy(expected(`${method} ${url}: no answer within ${timeout} ms`)))
      req.on('error', reject)
      req.end(body)
    })
  }

  /** The JSON body of a 200 answer. */
  async function getJson (url, options) {
    const res = await request(url, options)
    if (res.status !== 200) throw expected(`GET ${url}: ${res.status} ${res.body.toString().slice(0, 300)}`)
    return JSON.parse(res.body.toString())
  }

  /** Retries `fn` until it resolves, for at most `timeout` ms. */
  async function eventually (fn, timeout = 20000) {
    const end = Date.now() + timeout
    let last
    while (Date.now() < end) {
      try {
        return await fn()
      } catch (err) {
        last = err
        await sleep(250)
      }
    }
    throw last
  }

  /** A TCP port free on every IPv4 address. */
  function freePort () {
    return new Promise((resolve, reject) => {
      const server = net.createServer()
      server.once('error', reject)
      server.listen(0, '0.0.0.0', () => {
        const { port } = server.address()
        server.close(() => resolve(port))
      })
    })
  }

  /** A file in the run's scratch folder (removed at the end). */
  function scratch (name, content) {
    const file = path.join(tmpDir, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    if (content !== undefined) fs.writeFileSync(file, content)
    return file
  }

  /** Writes a config file for the host app (apps/host-app.js); returns its path. */
  function writeConfig (name, config) {
    const body = `'use strict'\n// written by test/windows-host\nmodule.exports = ${JSON.stringify(config, null, 2)}\n`
    return scratch(path.join(name, 'httpsys.config.js'), body)
  }

  /**
   * Runs a command with a Basic User token (`runas /trustlevel:0x20000`: the
   * administrators group deny-only, the privileges gone), as an unelevated prompt of the
   * same user would. runas needs no password for that and no logged-on session, and
   * works whether UAC is on or off (a hosted runner's). It starts the command in a new
   * console and returns at once: the command is a .cmd file whose output goes to a file,
   * and a second file says it has finished.
   * @param {string} name
   * @param {string[][]} commands each an argv; `node` is this node.exe
   * @returns {Promise<{code: number, output: string}[]>} one per command
   */
  async function unelevated (name, commands, { timeout = 60000 } = {}) {
    const dir = scratch(`unelevated-${id()}-${name}`)
    fs.mkdirSync(dir, { recursive: true })
    const quote = (a) => /[\s"&|<>^]/.test(a) ? `"${a.replace(/"/g, '""')}"` : a
    const lines = ['@echo off', `cd /d ${quote(ROOT)}`]
    commands.forEach((argv, i) => {
      const [exe, ...rest] = argv
      const file = exe === 'node' ? process.execPath : exe
      lines.push(`${[file, ...rest].map(quote).join(' ')} > ${quote(path.join(dir, `out-${i}.txt`))} 2>&1`)
      lines.push(`echo %ERRORLEVEL% > ${quote(path.join(dir, `code-${i}.txt`))}`)
    })
    lines.push(`echo done > ${quote(path.join(dir, 'done.txt'))}`)
    const script = path.join(dir, 'run.cmd')
    fs.writeFileSync(script, lines.join('\r\n') + '\r\n')
    // runas takes the whole command as one argument (quoted again by spawn)
    const r = await run('runas', ['/trustlevel:0x20000', `cmd.exe /d /c "${script}"`], { timeout: 20000 })
    if (r.code !== 0) throw expected(`runas /trustlevel:0x20000 exited ${r.code}: ${r.output.trim()}`)
    const end = Date.now() + timeout
    while (!fs.existsSync(path.join(dir, 'done.txt'))) {
      if (Date.now() > end) throw expected(`the unelevated commands did not finish within ${timeout / 1000} s (${dir})`)
      await sleep(250)
    }
    return commands.map((_, i) => ({
      code: Number(fs.readFileSync(path.join(dir, `code-${i}.txt`), 'utf8').trim()),
      output: fs.readFileSync(path.join(dir, `out-${i}.txt`), 'utf8')
    }))
  }

  return {
    wine,
    logDir,
    tmpDir,
    ROOT,
    BIN,
    APPS,
    run,
    runSync,
    httpsys,
    httpsysSync,
    kill,
    alive,
    startSupervisor,
    readyPids,
    request,
    getJson,
    eventually,
    freePort,
    scratch,
    writeConfig,
    unelevated,
    sleep,
    windowsBuild
  }
}

/** The value a check needs from an earlier one, or a failure that says which. */
function need (value, what) {
  if (value === undefined || value === null) throw expected(`not run: needs ${what}`)
  return value
}

/** The Windows build number (20348: Server 2022; 22000 and up: Windows 11; 26100: Server 2025). */
function windowsBuild () {
  return Number(os.release().split('.')[2]) || 0
}

/** The JSON records in a supervisor's output; other lines are skipped. */
function parseRecords (text) {
  const out = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue
    try {
      out.push(JSON.parse(line))
    } catch {}
  }
  return out
}

/** The first JSON value (object or array) in a command's output. */
function firstJson (text) {
  const at = text.search(/[[{]/)
  if (at === -1) throw expected(`no JSON in:\n${text}`)
  return JSON.parse(text.slice(at))
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** `promise`, or 'timeout' after `ms`. */
function within (promise, ms) {
  let timer
  const timeout = new Promise((resolve) => { timer = setTimeout(resolve, ms, 'timeout') })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function tail (text, lines = 25) {
  return text.split('\n').slice(-lines).join('\n')
}

module.exports = { createHost, need, parseRecords, firstJson, sleep, within, tail, windowsBuild, ROOT, BIN, APPS }
