'use strict'

// Linux: a systemd unit that runs `httpsys start -c <config>` in the foreground. A user
// unit (~/.config/systemd/user), or with --system a system unit (/etc/systemd/system).
// Install writes the unit and prints the systemctl commands that enable and start it
// (what is enabled, and when, stays the user's decision) unless --now asks for them, as
// `systemctl enable --now` does; uninstall stops the service before it removes the unit
// (a unit whose file is gone cannot be stopped by name after the next daemon-reload).
//
// KillMode=mixed and TimeoutStopSec follow the stop ladder: templates/httpsys.service
// says why on the lines themselves, for whoever reads the unit.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')
const { render } = require('./render')
const { stopTimeout, command } = require('./common')

const MARK = 'written by `httpsys service install`'
const SYSTEM_DIR = '/etc/systemd/system'

/** One ExecStart= word: bare when safe, else double-quoted with C escapes; `%` and `$` doubled (specifiers, variables). */
function execArg (arg) {
  const s = String(arg)
  if (/[\0\n\r]/.test(s)) throw new codes.ERR_INVALID_ARG_VALUE({ name: 'a path in ExecStart', value: s, reason: 'must not contain a line break' })
  const escaped = s.replace(/%/g, '%%').replace(/\$/g, '$$$$')
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return escaped
  return `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
}

/** One Environment= assignment, quoted (spaces), with `%` doubled and `\`, `"` escaped. */
function envAssignment (name, value) {
  return `"${`${name}=${value}`.replace(/%/g, '%%').replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
}

/** A whole-line value (WorkingDirectory=): specifiers doubled; the rest is taken as it is. */
function lineValue (value) {
  return String(value).replace(/%/g, '%%')
}

/**
 * Where the unit goes, and how its systemctl is called.
 * @param {object} t the install target (src/service/index.js)
 */
function placement (t) {
  const scope = t.system ? 'system' : 'user'
  const configHome = t.env.XDG_CONFIG_HOME || path.join(t.home, '.config')
  const dir = t.system ? SYSTEM_DIR : path.join(configHome, 'systemd', 'user')
  const systemctl = t.system ? 'systemctl' : 'systemctl --user'
  return { scope, dir, file: path.join(dir, `${t.name}.service`), systemctl, journalctl: t.system ? 'journalctl' : 'journalctl --user' }
}

/**
 * The runtime directory the supervisor uses, so `httpsys ls` from a shell finds it
 * (docs/supervisor.md 4.5):
 * - a user unit runs as the installing user, in their user manager, which lives as long
 *   as /run/user/<uid>: the directory that user's shells use ($XDG_RUNTIME_DIR/httpsys),
 *   or their HTTPSYS_RUNTIME_DIR;
 * - a system unit gets /run/<name> (/run/httpsys-<name> for a name that does not start
 *   with httpsys), made by systemd for the unit's user with mode
 *   0700 (RuntimeDirectory=) and removed when it stops: /run/user/<uid> disappears when
 *   that user logs out, and a directory under /tmp is cleaned by age, both while the
 *   service runs. A shell sets HTTPSYS_RUNTIME_DIR to reach it.
 */
function runtimeDirOf (t) {
  if (t.system) {
    const managed = /^httpsys/i.test(t.name) ? t.name : `httpsys-${t.name}`
    return { dir: `/run/${managed}`, managed, shellFinds: false }
  }
  if (t.env.HTTPSYS_RUNTIME_DIR) return { dir: path.resolve(t.env.HTTPSYS_RUNTIME_DIR), managed: null, shellFinds: true }
  const dir = `/run/user/${t.uid}/httpsys`
  return { dir, managed: null, shellFinds: t.env.XDG_RUNTIME_DIR === `/run/user/${t.uid}` }
}

/**
 * The unit's text and where it goes.
 * @param {object} t { name, configFile, config, execPath, bin, system, user, uid, home, env }
 */
function plan (t) {
  const where = placement(t)
  const runtime = runtimeDirOf(t)
  const { ms, killTimeout } = stopTimeout(t.config)
  const start = command(t, 'start', '-c', t.configFile).map(execArg).join(' ')
  const reload = command(t, 'reload', 'all', '-c', t.configFile).map(execArg).join(' ')
  const pathEnv = [path.dirname(t.execPath), ...String(t.env.PATH || '/usr/local/bin:/usr/bin:/bin').split(':')]
    .filter((p, i, all) => p && all.indexOf(p) === i).join(':')
  const text = render('httpsys.service', {
    name: t.name,
    // comments are not parsed; Description= expands specifiers
    configFile: t.configFile,
    description: lineValue(`httpsys: the apps of ${t.configFile}`),
    wants: t.system ? 'network-online.target' : null,
    after: t.system ? 'network-online.target' : null,
    execStart: start,
    execReload: reload,
    workingDirectory: lineValue(path.dirname(t.configFile)),
    user: t.system && t.user ? t.user : null,
    runtimeDirEnv: envAssignment('HTTPSYS_RUNTIME_DIR', runtime.dir),
    runtimeDirectory: runtime.managed,
    runtimeDirectoryMode: runtime.managed ? '0700' : null,
    pathEnv: envAssignment('PATH', pathEnv),
    killTimeout: seconds(killTimeout),
    timeoutStopSec: seconds(ms),
    wantedBy: t.system ? 'multi-user.target' : 'default.target'
  })
  return { ...where, runtime, text, stopTimeoutMs: ms }
}

function seconds (ms) {
  return `${Math.ceil(ms / 1000)}s`
}

/** Whether the file at `file` is one of ours (its first line says so). */
function isOurs (file, fsys = fs) {
  try {
    return fsys.readFileSync(file, 'utf8').split('\n', 1)[0].includes(MARK)
  } catch {
    return false
  }
}

/**
 * Writes the unit. Installing again over our own unit replaces it (a changed
 * kill_timeout, another node); a unit of that name httpsys did not write is left alone.
 * @returns {object} plan() plus { replaced, commands, notes }
 */
function install (t, { fsys = fs, dryRun = false } = {}) {
  const p = plan(t)
  let replaced = false
  if (fsys.existsSync(p.file)) {
    if (!isOurs(p.file, fsys)) throw new codes.ERR_HTTPSYS_SERVICE_EXISTS({ name: t.name, kind: 'systemd unit', path: p.file, ours: false })
    replaced = true
  }
  const systemctl = t.system ? ['systemctl'] : ['systemctl', '--user']
  // --now: what the printed commands say, run
  const start = [[...systemctl, 'daemon-reload'], replaced ? [...systemctl, 'restart', t.name] : [...systemctl, 'enable', '--now', t.name]]
  if (dryRun) return { ...p, replaced, commands: start.map((argv) => argv.join(' ')), start, notes: notesOf(t, p) }
  try {
    fsys.mkdirSync(p.dir, { recursive: true })
    fsys.writeFileSync(p.file, p.text + '\n', { mode: 0o644 })
  } catch (err) {
    if (err.code === 'EACCES' || err.code === 'EPERM' || err.code === 'EROFS') {
      throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'write', path: p.file, reason: err.code, command: t.system ? `sudo ${t.command}` : undefined })
    }
    throw err
  }
  return { ...p, replaced, commands: start.map((argv) => argv.join(' ')), start, notes: notesOf(t, p) }
}

function notesOf (t, p) {
  const notes = []
  if (!t.system) {
    notes.push(`a user unit starts with ${t.username}'s user manager: at boot, and after logging out, only with \`loginctl enable-linger ${t.username}\``)
  }
  if (t.system && !t.user) notes.push('the apps run as root: give --user <account> to run them as another user')
  if (t.system && t.user) notes.push(`${t.user} must be able to read ${t.bin ? `${t.execPath}, ${t.bin}` : t.execPath} and ${path.dirname(t.configFile)}`)
  if (!p.runtime.shellFinds) {
    notes.push(`\`httpsys ls\`, \`logs\` and \`stop\` reach it from a shell of ${t.system ? (t.user || 'root') : t.username} with HTTPSYS_RUNTIME_DIR=${p.runtime.dir}`)
  }
  notes.push(`its records: \`${p.journalctl} -u ${t.name} -f\`; after changing an app's kill_timeout, install again (TimeoutStopSec follows it)`)
  return notes
}

/**
 * Stops the service, then removes our unit and the links `systemctl enable` made for it
 * in the same folder, then has systemd read its units again.
 * @param {object} deps { fsys, exec: (argv) => { status, stderr, error } }
 * @returns {{file, removed: boolean, stopped: boolean, links: string[], commands: string[]}}
 */
function uninstall (t, { fsys = fs, exec } = {}) {
  const where = placement(t)
  if (!fsys.existsSync(where.file)) return { ...where, removed: false, stopped: false, links: [], commands: [] }
  if (!isOurs(where.file, fsys)) {
    throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'remove', path: where.file, reason: 'httpsys did not write it', fix: 'Remove it by hand, or name the unit httpsys installed with --name' })
  }
  const systemctl = t.system ? ['systemctl'] : ['systemctl', '--user']
  const stop = exec([...systemctl, 'stop', t.name])
  // no systemctl (a container): nothing of systemd's can be running it
  const stopped = !stop.error && stop.status === 0
  if (!stop.error && stop.status !== 0 && !/not loaded|not found|does not exist/i.test(stop.stderr || '')) {
    throw new codes.ERR_HTTPSYS_SERVICE_DENIED({
      action: 'stop',
      path: `the systemd unit ${t.name}`,
      reason: `\`${systemctl.join(' ')} stop ${t.name}\` said: ${String(stop.stderr || `exit code ${stop.status}`).trim().split('\n')[0]}`,
      fix: `Nothing was removed. Stop it (\`${systemctl.join(' ')} stop ${t.name}\`${t.system ? ', as root' : ''}), then uninstall again`
    })
  }
  const links = []
  try {
    // stop and disable while systemd still knows the unit
    for (const entry of fsys.readdirSync(where.dir)) {
      if (!/\.(wants|requires)$/.test(entry)) continue
      const link = path.join(where.dir, entry, `${t.name}.service`)
      try {
        if (fsys.lstatSync(link).isSymbolicLink()) {
          fsys.unlinkSync(link)
          links.push(link)
        }
      } catch {}
    }
    fsys.unlinkSync(where.file)
  } catch (err) {
    if (err.code === 'EACCES' || err.code === 'EPERM') {
      throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'remove', path: where.file, reason: err.code, command: `sudo ${t.command}` })
    }
    throw err
  }
  const reload = stop.error ? null : exec([...systemctl, 'daemon-reload'])
  const commands = reload === null || (!reload.error && reload.status === 0) ? [] : [`${where.systemctl} daemon-reload`]
  return { ...where, removed: true, stopped, links, commands }
}

/**
 * What is installed under that name, read from the unit file (no systemctl).
 * @returns {{installed: boolean, file, scope, enabled, configFile, runtimeDir, commands}}
 */
function status (t, { fsys = fs } = {}) {
  const where = placement(t)
  const out = { ...where, installed: false, ours: false, enabled: false, configFile: null, runtimeDir: null, commands: [] }
  let text
  try {
    text = fsys.readFileSync(where.file, 'utf8')
  } catch {
    return out
  }
  out.installed = true
  out.ours = isOurs(where.file, fsys)
  try {
    out.enabled = fsys.readdirSync(where.dir).some((entry) => /\.wants$/.test(entry) && fsys.existsSync(path.join(where.dir, entry, `${t.name}.service`)))
  } catch {}
  const start = /^ExecStart=(.*)$/m.exec(text)
  const config = start && /\s-c\s+("(?:[^"\\]|\\.)*"|\S+)\s*$/.exec(start[1])
  if (config) out.configFile = unquote(config[1])
  const runtime = /^Environment="HTTPSYS_RUNTIME_DIR=((?:[^"\\]|\\.)*)"$/m.exec(text)
  if (runtime) out.runtimeDir = unquote(`"${runtime[1]}"`)
  out.commands = [`${where.systemctl} status ${t.name}`, `${where.journalctl} -u ${t.name} -f`]
  return out
}

function unquote (word) {
  const s = word.startsWith('"') ? word.slice(1, -1).replace(/\\(.)/g, '$1') : word
  return s.replace(/%%/g, '%').replace(/\$\$/g, '$')
}

module.exports = { plan, install, uninstall, status, execArg, envAssignment, placement, MARK }
