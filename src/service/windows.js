'use strict'

// Windows: a real service. The service control manager starts
//   "<node.exe>" "<httpsys bin>" service run --name <name> -c "<config>"
// at boot (SERVICE_AUTO_START), that process hosts the service (src/service/run.js) and
// turns the SCM's stop into the supervisor's graceful stop; failures are restarted by
// the SCM's recovery actions.
//
// The account: by default the service's virtual account, NT SERVICE\<name>. It needs no
// password, has its own SID (so URL reservations and file permissions can name exactly
// this service), and is not an administrator: an app with a remote-code-execution bug
// gets that account, not the machine. This is what IIS does for its application pools
// (ApplicationPoolIdentity). LocalSystem would need no URL reservation, but would hand
// every app full control of the machine; it stays available with --user LocalSystem.
// Because the account is not an administrator, HTTP.SYS lets it register only the
// prefixes reserved for it: the install makes those reservations (it runs elevated
// anyway) for the account's SID, which is known before the service exists.

const crypto = require('node:crypto')
const path = require('node:path')
const { codes } = require('../errors')
const { stopTimeout } = require('./common')

const win = path.win32

// what `service status` says of the recovery actions
const RESTART_DELAYS_MS = [5000, 10000, 30000]
// failures counted within a day: after a day without one, the first delay again
const RESET_PERIOD_S = 24 * 60 * 60

const BUILTIN = new Map([
  ['localsystem', { account: null, shown: 'LocalSystem', sid: 'S-1-5-18', admin: true }],
  ['nt authority\\system', { account: null, shown: 'LocalSystem', sid: 'S-1-5-18', admin: true }],
  ['localservice', { account: 'NT AUTHORITY\\LocalService', shown: 'NT AUTHORITY\\LocalService', sid: 'S-1-5-19' }],
  ['nt authority\\localservice', { account: 'NT AUTHORITY\\LocalService', shown: 'NT AUTHORITY\\LocalService', sid: 'S-1-5-19' }],
  ['networkservice', { account: 'NT AUTHORITY\\NetworkService', shown: 'NT AUTHORITY\\NetworkService', sid: 'S-1-5-20' }],
  ['nt authority\\networkservice', { account: 'NT AUTHORITY\\NetworkService', shown: 'NT AUTHORITY\\NetworkService', sid: 'S-1-5-20' }]
])

/** The command line the SCM runs. Windows paths cannot hold `"`, and files never end in `\`. */
function binPath ({ execPath, bin, name, configFile }) {
  return `"${execPath}"${bin ? ` "${bin}"` : ''} service run --name ${name} -c "${configFile}"`
}

/** Whether a service's command line is one `httpsys service install` wrote for `name`. */
function isOurs (query, name) {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return Boolean(query && new RegExp(`" service run --name ${escaped} -c "`, 'i').test(query.binPath || ''))
}

/**
 * The SID of a service (and of its virtual account NT SERVICE\<name>): S-1-5-80- and the
 * SHA-1 of the upper-cased name in UTF-16LE as five little-endian numbers (what
 * `sc.exe showsid` prints). Known without the service existing, or a lookup.
 */
function serviceSid (name) {
  const hash = crypto.createHash('sha1').update(Buffer.from(name.toUpperCase(), 'utf16le')).digest()
  const parts = []
  for (let i = 0; i < 20; i += 4) parts.push(hash.readUInt32LE(i))
  return `S-1-5-80-${parts.join('-')}`
}

/**
 * --user -> what CreateServiceW gets and who the URL reservations are for.
 * @returns {{kind: 'virtual'|'builtin'|'account', account: string|null, shown: string, sid: string, admin: boolean, needsPassword: boolean}}
 */
function resolveAccount (user, name, sc) {
  if (user === undefined || user === null || user === '') {
    return { kind: 'virtual', account: `NT SERVICE\\${name}`, shown: `NT SERVICE\\${name}`, sid: serviceSid(name), admin: false, needsPassword: false }
  }
  const key = user.toLowerCase()
  const virtual = /^nt service\\(.+)$/i.exec(user)
  if (virtual) {
    if (virtual[1].toLowerCase() !== name.toLowerCase()) {
      throw new codes.ERR_INVALID_ARG_VALUE({ name: '--user', value: user, reason: `is the virtual account of another service: this service's is NT SERVICE\\${name}` })
    }
    return resolveAccount(undefined, name, sc)
  }
  if (BUILTIN.has(key)) return { kind: 'builtin', admin: false, needsPassword: false, ...BUILTIN.get(key) }
  const found = sc.lookupAccount(user, { what: `The service account ${user}` })
  const shown = found.domain ? `${found.domain}\\${found.name}` : found.name
  // a group managed service account (DOMAIN\name$) has its password managed by the domain
  return { kind: 'account', account: user.includes('\\') || user.includes('@') ? user : `.\\${user}`, shown, sid: found.sid, admin: false, needsPassword: !user.endsWith('$') }
}

/**
 * The URL reservations and certificate bindings the config needs, for the service's
 * account: `httpsys start --setup` for that account (src/setup/start-setup.js).
 * @returns {{what: string, command: string, run: Function}[]}
 */
function setupSteps (config, sc, account) {
  const { createUrlAcl, needsReservation, reservedFor } = require('../setup/urlacl')
  const { planSetup } = require('../setup/start-setup')
  const steps = []
  if (!account.admin) {
    const urlacl = createUrlAcl(sc)
    const reservations = sc.urlAclList()
    const seen = new Set()
    for (const app of config.apps) {
      for (const prefix of app.urls) {
        if (seen.has(prefix) || !needsReservation(prefix)) continue
        seen.add(prefix)
        if (reservedFor(reservations, prefix, account.sid, 'service')) continue
        steps.push({
          what: `reserve ${prefix} for ${account.shown}`,
          command: `httpsys urlacl add ${prefix} --user "${account.shown}"`,
          run: () => urlacl.add(prefix, { user: account.sid })
        })
      }
    }
  }
  for (const step of planSetup(config, sc).steps) {
    if (step.kind === 'cert') steps.push(step)
  }
  return steps
}

/** Where `service run` writes the supervisor's records (readable by administrators). */
function logFile (name, env = process.env) {
  return win.join(env.ProgramData || env.PROGRAMDATA || 'C:\\ProgramData', 'httpsys', name, 'service.log')
}

/** Folders the account must read that a non-administrator account cannot by default. */
function privateFolders (t, account) {
  if (account.admin) return []
  const profile = t.env.USERPROFILE ? t.env.USERPROFILE.toLowerCase() + '\\' : null
  const folders = [win.dirname(t.execPath), ...(t.bin ? [win.dirname(win.dirname(t.bin))] : []), win.dirname(t.configFile),
    ...t.config.apps.map((a) => a.cwd).filter(Boolean)]
  const out = []
  for (const folder of folders) {
    const f = folder.toLowerCase() + '\\'
    if (!(profile && f.startsWith(profile)) && !/^[a-z]:\\users\\/.test(f)) continue
    if (out.some((o) => f.startsWith(o.toLowerCase() + '\\'))) continue
    out.push(folder)
  }
  return out
}

/**
 * Installs the service. Elevated only (the SCM and HTTP.SYS's configuration both need it).
 * @param {object} t the install target (src/service/index.js) with env, execPath, bin, command
 * @param {object} deps { scm, sc, password: (account) => Promise<string> }
 */
async function install (t, { scm, sc, password }) {
  if (t.dryRun) return plan(t, { scm, sc })
  if (sc.isElevated() === false) {
    throw new codes.ERR_HTTPSYS_NOT_ELEVATED({ what: `Installing the Windows service ${t.name}`, by: 'the service control manager', syscall: 'OpenSCManagerW', command: t.command })
  }
  const existing = scm.query(t.name)
  if (existing) throw new codes.ERR_HTTPSYS_SERVICE_EXISTS({ name: t.name, kind: 'Windows service', ours: isOurs(existing, t.name) })
  const account = resolveAccount(t.user, t.name, sc)
  const secret = account.needsPassword ? await password(account) : null
  const { ms } = stopTimeout(t.config)

  // the reservations first: the account's SID is known before the service exists, and
  // a conflict leaves no half-installed service behind
  const done = []
  for (const step of setupSteps(t.config, sc, account)) {
    step.run()
    done.push(step.what)
  }

  const command = binPath(t)
  scm.create({
    name: t.name,
    displayName: `httpsys ${t.name}`,
    binPath: command,
    startType: 'auto',
    account: account.account,
    password: secret,
    // HTTP.SYS is the HTTP service: started first, stopped after us
    dependencies: t.config.backend === 'hub' ? [] : ['HTTP']
  }, { what: `Installing the Windows service ${t.name}`, command: t.command })
  const unsupported = []
  try {
    const context = { what: `Configuring the Windows service ${t.name}`, command: t.command }
    const set = (option, what) => { if (!scm.configure(t.name, option, context)) unsupported.push(what) }
    set({ description: `Runs the apps of ${t.configFile} (httpsys start). Installed by \`httpsys service install\`.` }, 'the description')
    // Restart=on-failure: a crash, and (with the flag) a stop with a non-zero exit code,
    // which is how `service run` reports a supervisor that failed
    set({ failureActions: { resetPeriod: RESET_PERIOD_S, actions: RESTART_DELAYS_MS.map((delay) => ({ type: 'restart', delay })) } }, 'the recovery actions')
    set({ failureActionsOnNonCrashFailures: true }, 'recovery after a stop with an error code')
    // at shutdown the SCM waits this long for the stop ladder (TimeoutStopSec's twin)
    set({ preshutdownTimeout: ms }, 'the preshutdown timeout')
    // the service SID in its token: file permissions can name NT SERVICE\<name>
    set({ sidType: 'unrestricted' }, 'the service SID type')
  } catch (err) {
    scm.delete(t.name)
    throw err
  }

  const notes = []
  if (account.kind === 'virtual' || account.kind === 'builtin') {
    const folders = privateFolders(t, account)
    if (folders.length > 0) {
      notes.push(`${account.shown} cannot read folders in a user profile; grant it, elevated:\n` +
        folders.map((f) => `      icacls "${f}" /grant "${account.shown}:(OI)(CI)RX"`).join('\n'))
    }
    notes.push(`${account.shown} must be able to write each app's log_dir, if any (icacls ... /grant "${account.shown}:(OI)(CI)M")`)
  }
  if (account.kind === 'account') notes.push(`${account.shown} needs the "Log on as a service" right (secpol.msc: Local Policies > User Rights Assignment), else the start fails with ERROR_SERVICE_LOGON_FAILED (1069)`)
  if (account.admin) notes.push('LocalSystem is an administrator of this machine, and so is every app it runs: prefer the default account')
  if (unsupported.length > 0) notes.push(`this Windows did not take ${unsupported.join(', ')} (ERROR_INVALID_LEVEL)`)
  notes.push(`\`httpsys ls\` from this prompt does not reach it (it runs as ${account.shown}); \`httpsys service status --name ${t.name}\` does, and its records are in ${logFile(t.name, t.env)}`)
  return {
    name: t.name,
    binPath: command,
    account: account.shown,
    sid: account.sid,
    done,
    unsupported,
    stopTimeoutMs: ms,
    restartDelaysMs: RESTART_DELAYS_MS,
    commands: [`sc.exe start ${t.name}`],
    notes
  }
}

/**
 * --dry-run: what install would create and set up, changing nothing (no elevation needed
 * to read it; an account's password is not asked for).
 */
function plan (t, { scm, sc }) {
  const existing = scm.query(t.name)
  if (existing) throw new codes.ERR_HTTPSYS_SERVICE_EXISTS({ name: t.name, kind: 'Windows service', ours: isOurs(existing, t.name) })
  const account = resolveAccount(t.user, t.name, sc)
  const { ms } = stopTimeout(t.config)
  return {
    name: t.name,
    binPath: binPath(t),
    account: account.shown,
    sid: account.sid,
    done: [],
    would: setupSteps(t.config, sc, account).map((step) => step.what),
    unsupported: [],
    stopTimeoutMs: ms,
    restartDelaysMs: RESTART_DELAYS_MS,
    commands: [`sc.exe start ${t.name}`],
    notes: []
  }
}

/**
 * Stops the service if it runs (the stop ladder, through the SCM), then deletes it.
 * @param {object} deps { scm, sc, sleep, waitMs }
 */
async function uninstall (t, { scm, sc, sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)), waitMs = 120000 }) {
  if (sc.isElevated() === false) {
    throw new codes.ERR_HTTPSYS_NOT_ELEVATED({ what: `Removing the Windows service ${t.name}`, by: 'the service control manager', syscall: 'OpenSCManagerW', command: t.command })
  }
  const found = scm.query(t.name)
  if (!found) return { name: t.name, removed: false, stopped: false, reservations: [] }
  if (!isOurs(found, t.name)) {
    throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'remove', path: `the Windows service ${t.name}`, reason: 'it does not run `httpsys service run`', fix: `If you mean to, delete it with \`sc.exe delete ${t.name}\`` })
  }
  let stopped = false
  if (found.state !== 'stopped') {
    scm.control(t.name, 'stop', { what: `Stopping the Windows service ${t.name}`, command: t.command })
    const end = Date.now() + waitMs
    for (;;) {
      const now = scm.query(t.name)
      if (!now || now.state === 'stopped') break
      if (Date.now() > end) {
        throw new codes.ERR_HTTPSYS_SERVICE_CALL({ syscall: 'ControlService', name: t.name, win32: 1053, win32Name: 'ERROR_SERVICE_REQUEST_TIMEOUT', reason: `it was still ${now.state} after ${waitMs / 1000} s` })
      }
      await sleep(250)
    }
    stopped = true
  }
  scm.delete(t.name, { what: `Removing the Windows service ${t.name}`, command: t.command })
  // its reservations stay (another service may share a prefix): say which they are
  const sid = /^nt service\\/i.test(found.account || '') ? serviceSid(t.name) : null
  const reservations = sid === null
    ? []
    : sc.urlAclList().filter((r) => String(r.sddl || '').toUpperCase().includes(sid)).map((r) => r.prefix)
  return { name: t.name, removed: true, stopped, reservations }
}

/** The SCM's view of the service, or { installed: false }. */
function status (t, { scm }) {
  const q = scm.query(t.name)
  if (!q) return { name: t.name, installed: false }
  return {
    name: t.name,
    installed: true,
    ours: isOurs(q, t.name),
    state: q.state,
    pid: q.pid || null,
    startType: q.startType,
    delayedAutoStart: q.delayedAutoStart,
    account: q.account || 'LocalSystem',
    binPath: q.binPath,
    configFile: (/ -c "([^"]+)"\s*$/.exec(q.binPath || '') || [])[1] || null,
    description: q.description,
    dependencies: q.dependencies,
    failureActions: q.failureActions,
    failureActionsOnNonCrashFailures: q.failureActionsOnNonCrashFailures,
    preshutdownTimeout: q.preshutdownTimeout,
    exitCode: q.win32ExitCode === 1066 ? { service: q.serviceExitCode } : { win32: q.win32ExitCode },
    log: logFile(t.name, t.env)
  }
}

module.exports = { install, uninstall, status, binPath, serviceSid, resolveAccount, setupSteps, isOurs, logFile, RESTART_DELAYS_MS, RESET_PERIOD_S }
