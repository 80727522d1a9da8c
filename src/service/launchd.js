'use strict'

// macOS: a launchd job that runs `httpsys start -c <config>` in the foreground. A
// LaunchAgent of the installing user (~/Library/LaunchAgents) unless --system (a
// LaunchDaemon in /Library/LaunchDaemons, as root, optionally as --user). Install writes
// the plist and prints the launchctl commands that load it, or with --now runs them;
// uninstall boots the job out (stopping it) before it removes the plist.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')
const { render } = require('./render')
const { stopTimeout, command } = require('./common')

const MARK = 'written by `httpsys service install`'

function xml (value) {
  return String(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

function placement (t) {
  const system = Boolean(t.system)
  const dir = system ? '/Library/LaunchDaemons' : path.join(t.home, 'Library', 'LaunchAgents')
  const domain = system ? 'system' : `gui/${t.uid}`
  const logDir = system ? '/Library/Logs/httpsys' : path.join(t.home, 'Library', 'Logs', 'httpsys')
  return { scope: system ? 'system' : 'user', dir, file: path.join(dir, `${t.name}.plist`), domain, logFile: path.join(logDir, `${t.name}.log`), sudo: system ? 'sudo ' : '' }
}

/**
 * The runtime directory (docs/supervisor.md 4.5): an agent runs as the installing user,
 * so the one that user's shells use, written out because launchd gives agents no
 * TMPDIR of theirs to derive it from; a daemon gets one of its own under /var/run
 * (root) or /var/tmp (another user: it creates it, private, at its first start).
 */
function runtimeDirOf (t) {
  if (!t.system) return { dir: t.runtimeDir, shellFinds: true }
  return { dir: t.user ? `/var/tmp/httpsys-${t.name}` : `/var/run/httpsys-${t.name}`, shellFinds: false }
}

function plan (t) {
  const where = placement(t)
  const runtime = runtimeDirOf(t)
  const { ms, killTimeout } = stopTimeout(t.config)
  const pathEnv = [path.dirname(t.execPath), ...String(t.env.PATH || '/usr/local/bin:/usr/bin:/bin').split(':')]
    .filter((p, i, all) => p && all.indexOf(p) === i).join(':')
  const text = render('httpsys.plist', {
    name: xml(t.name),
    programArguments: command(t, 'start', '-c', t.configFile).map((a) => `    <string>${xml(a)}</string>`).join('\n'),
    workingDirectory: xml(path.dirname(t.configFile)),
    user: t.system && t.user ? xml(t.user) : null,
    runtimeDir: xml(runtime.dir),
    path: xml(pathEnv),
    killTimeout: Math.ceil(killTimeout / 1000),
    exitTimeOut: Math.ceil(ms / 1000),
    logFile: xml(where.logFile)
  })
  return { ...where, runtime, text, stopTimeoutMs: ms }
}

function isOurs (file, fsys = fs) {
  try {
    return fsys.readFileSync(file, 'utf8').split('\n', 5).some((line) => line.includes(MARK))
  } catch {
    return false
  }
}

function install (t, { fsys = fs, dryRun = false } = {}) {
  const p = plan(t)
  let replaced = false
  if (fsys.existsSync(p.file)) {
    if (!isOurs(p.file, fsys)) throw new codes.ERR_HTTPSYS_SERVICE_EXISTS({ name: t.name, kind: 'launchd job', path: p.file, ours: false })
    replaced = true
  }
  const target = `${p.domain}/${t.name}`
  const start = replaced
    ? [['launchctl', 'bootout', target], ['launchctl', 'bootstrap', p.domain, p.file]]
    : [['launchctl', 'bootstrap', p.domain, p.file]]
  const commands = start.map((argv) => `${p.sudo}${argv.map(quote).join(' ')}`)
  if (dryRun) return { ...p, replaced, commands, start, notes: notesOf(t, p) }
  try {
    fsys.mkdirSync(p.dir, { recursive: true })
    // launchd opens the log file but does not make its folder
    fsys.mkdirSync(path.dirname(p.logFile), { recursive: true })
    fsys.writeFileSync(p.file, p.text + '\n', { mode: 0o644 })
  } catch (err) {
    if (err.code === 'EACCES' || err.code === 'EPERM') {
      throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'write', path: p.file, reason: err.code, command: t.system ? `sudo ${t.command}` : undefined })
    }
    throw err
  }
  return { ...p, replaced, commands, start, notes: notesOf(t, p) }
}

function notesOf (t, p) {
  const target = `${p.domain}/${t.name}`
  const notes = []
  if (!t.system) notes.push('a LaunchAgent runs while you are logged in; for a machine without a login, install it with --system (as root)')
  if (t.system && !t.user) notes.push('the apps run as root: give --user <account> to run them as another user')
  if (!p.runtime.shellFinds) notes.push(`\`httpsys ls\`, \`logs\` and \`stop\` reach it from a shell of ${t.user || 'root'} with HTTPSYS_RUNTIME_DIR=${p.runtime.dir}`)
  notes.push(`its records: ${p.logFile}; \`${p.sudo}launchctl kickstart -k ${target}\` restarts it`)
  return notes
}

/**
 * Boots the job out (launchd stops it: SIGTERM, then SIGKILL after ExitTimeOut), then
 * removes the plist.
 * @param {object} deps { fsys, exec: (argv) => { status, stderr, error } }
 */
function uninstall (t, { fsys = fs, exec } = {}) {
  const where = placement(t)
  if (!fsys.existsSync(where.file)) return { ...where, removed: false, stopped: false, commands: [] }
  if (!isOurs(where.file, fsys)) {
    throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'remove', path: where.file, reason: 'httpsys did not write it', fix: 'Remove it by hand, or name the job httpsys installed with --name' })
  }
  const out = exec(['launchctl', 'bootout', `${where.domain}/${t.name}`])
  const stopped = !out.error && out.status === 0
  // a job that is not loaded (launchctl: "No such process", exit 3 or 113) has nothing to stop
  if (!out.error && out.status !== 0 && out.status !== 3 && out.status !== 113 && !/no such process|could not find/i.test(out.stderr || '')) {
    throw new codes.ERR_HTTPSYS_SERVICE_DENIED({
      action: 'stop',
      path: `the launchd job ${t.name}`,
      reason: `\`launchctl bootout ${where.domain}/${t.name}\` said: ${String(out.stderr || `exit code ${out.status}`).trim().split('\n')[0]}`,
      fix: `Nothing was removed. Stop it (\`${where.sudo}launchctl bootout ${where.domain}/${t.name}\`), then uninstall again`
    })
  }
  try {
    fsys.unlinkSync(where.file)
  } catch (err) {
    if (err.code === 'EACCES' || err.code === 'EPERM') throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'remove', path: where.file, reason: err.code, command: `sudo ${t.command}` })
    throw err
  }
  return { ...where, removed: true, stopped, commands: [] }
}

function status (t, { fsys = fs } = {}) {
  const where = placement(t)
  const out = { ...where, installed: false, ours: false, configFile: null, runtimeDir: null, commands: [] }
  let text
  try {
    text = fsys.readFileSync(where.file, 'utf8')
  } catch {
    return out
  }
  out.installed = true
  out.ours = isOurs(where.file, fsys)
  const args = [...text.matchAll(/^ {4}<string>(.*)<\/string>$/gm)].map((m) => unxml(m[1]))
  const c = args.indexOf('-c')
  if (c !== -1) out.configFile = args[c + 1] || null
  const runtime = /<key>HTTPSYS_RUNTIME_DIR<\/key>\s*<string>(.*)<\/string>/.exec(text)
  if (runtime) out.runtimeDir = unxml(runtime[1])
  out.commands = [`${where.sudo}launchctl print ${where.domain}/${t.name}`]
  return out
}

function unxml (s) {
  return s.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
}

function quote (p) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, "'\\''")}'`
}

module.exports = { plan, install, uninstall, status, placement, MARK }
