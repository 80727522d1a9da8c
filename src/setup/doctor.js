'use strict'

// `httpsys doctor`: what stands between this machine and serving the config, each
// finding with the exact command that fixes it. On Windows (HTTP.SYS): the addon, the
// HTTP service, who holds each configured port, the URL reservations that cover each
// prefix (and for whom), the certificate bindings of https prefixes and the state of
// their certificates (a private key this account cannot open is fine: a machine key an
// elevated import made opens for administrators and for HTTP.SYS, which uses it as
// SYSTEM through LSASS), elevation. Elsewhere (the hub): reservations and bindings do not
// exist there; the ports must be free (or held by this config's running supervisor)
// and the runtime directory private.
//
// Findings: { level: 'ok' | 'info' | 'warn' | 'error', area, message, fix? }. Only an
// error makes `doctor` exit 1: a warning is something that works now but may not for
// another account or on another day.

const fs = require('node:fs')
const net = require('node:net')
const urlprefix = require('../urlprefix')
const { covers, needsReservation } = require('./urlacl')
const { currentUser } = require('../httpsys/service-config')
const { parseSddl } = require('./sddl')
const { checkAuth } = require('./auth-checks')

// Accounts every user is part of: a reservation for them covers the current user too.
const EVERYONE_SIDS = new Set(['S-1-1-0', 'S-1-5-11', 'S-1-5-4', 'S-1-5-32-545'])
// HTTP.SYS's own listeners belong to the System process.
const SYSTEM_PID = 4

/**
 * @param {object} options
 * @param {object|null} options.config a validated config, or null (machine-wide checks only)
 * @param {string} [options.platform=process.platform]
 * @param {() => object} [options.serviceConfig] the service configuration (Windows)
 * @param {() => object} [options.cert] the cert commands' library (Windows)
 * @param {() => void} [options.loadAddon] throws ERR_HTTPSYS_NATIVE_UNAVAILABLE (Windows)
 * @param {object} [options.hub] { runtimeDir, ensurePrivate, running } for the hub checks
 * @param {object} [options.machine] { env, hostname } for the auth checks (auth-checks.js)
 * @returns {Promise<{findings: object[], ok: boolean, router: string}>}
 */
async function doctor (options) {
  const platform = options.platform || process.platform
  const findings = platform === 'win32' ? windowsChecks(options) : await hubChecks(options)
  // Windows authentication: the schemes, the SPNs Negotiate needs, the hub's stand-in
  checkAuth(options.config || null, platform, (level, area, message, fix) => findings.push(fix ? { level, area, message, fix } : { level, area, message }), options.machine)
  await checkMetrics(options, findings)
  return { findings, ok: !findings.some((f) => f.level === 'error'), router: platform === 'win32' ? 'HTTP.SYS' : 'hub' }
}

function prefixesOf (config) {
  if (config === null) return []
  const out = []
  for (const app of config.apps) for (const url of app.urls) out.push({ app: app.name, prefix: url })
  return out
}

// ---------------------------------------------------------------------------
// Windows: HTTP.SYS

function windowsChecks ({ config, serviceConfig, cert, loadAddon }) {
  const findings = []
  const add = (level, area, message, fix) => findings.push(fix ? { level, area, message, fix } : { level, area, message })
  try {
    loadAddon()
  } catch (err) {
    add('error', 'addon', `the HTTP.SYS addon does not load: ${err.message}`, 'reinstall httpsys-cli (its package ships prebuilds/win32-x64/httpsys_native.node), or run `npx node-gyp rebuild` in its folder')
    return findings
  }
  const sc = serviceConfig()
  const elevated = sc.isElevated()
  add('info', 'elevation', elevated === true
    ? 'this prompt is elevated: `httpsys start` here needs no URL reservation, and the setup commands can change the machine'
    : 'this prompt is not elevated: `httpsys start` here needs a URL reservation for each prefix, and the setup commands need an elevated prompt')

  const service = sc.serviceStatus('HTTP')
  if (service === null) add('warn', 'service', 'the state of the HTTP service (HTTP.SYS) could not be read')
  else if (service.state === 'running') add('ok', 'service', 'the HTTP service (HTTP.SYS) is running')
  else if (service.startType === 'disabled') add('error', 'service', 'the HTTP service (HTTP.SYS) is disabled', 'run elevated: `sc.exe config http start= demand` then `net start http`')
  else add('error', 'service', `the HTTP service (HTTP.SYS) is ${service.state}`, 'run elevated: `net start http`')

  const prefixes = prefixesOf(config)
  if (config !== null && prefixes.length === 0) {
    add('error', 'config', 'no app has urls: HTTP.SYS routes only prefixes registered before an app starts', 'give every app urls: ["http://+:8080/"] in httpsys.config.js (or -u on the command line)')
  }
  checkPorts(sc, prefixes, add)
  checkReservations(sc, prefixes, elevated, add)
  checkBindings(cert(), config, prefixes, elevated, add)
  checkTimers(sc, config, add)
  return findings
}

// HeaderWait and IdleConnection of a URL group (header_timeout, idle_timeout) apply only
// once a connection's first request has reached a queue; until then the machine-wide
// timers do (120 s unless set): a client that opens connections and sends nothing, or a
// head slowly (slowloris), holds each that long. docs/http-sys.md 1.
function checkTimers (sc, config, add) {
  if (config === null) return
  const machine = sc.machineTimeouts()
  if (machine === null) {
    add('warn', 'timers', 'HTTP.SYS\'s machine-wide timers could not be read')
    return
  }
  const s = (ms) => Math.ceil(ms / 1000)
  const timers = [
    ['headerWait', 'header_timeout', 'headerwaittimeout', (t) => `a new connection has ${t} s to send its first request head`],
    ['idleConnection', 'idle_timeout', 'idleconnectiontimeout', (t) => `a new connection may stay idle ${t} s before its first request`]
  ]
  for (const [key, limit, type, what] of timers) {
    const want = s(config.limits[limit])
    const have = machine[key]
    if (have <= want) {
      add('ok', 'timers', `${what(have)} (HTTP.SYS's machine-wide ${type}), within ${limit} (${want} s)`)
      continue
    }
    add('warn', 'timers',
      `${what(have)} (HTTP.SYS's machine-wide ${type}${machine.set ? '' : ', its default'}): ` +
      `${limit} (${want} s) applies on HTTP.SYS only from a connection's second request`,
      `run once, elevated: \`netsh http add timeout timeouttype=${type} value=${want}\` (every HTTP.SYS app on this machine gets it)`)
  }
}

function checkPorts (sc, prefixes, add) {
  const ports = [...new Set(prefixes.map((p) => urlprefix.parse(p.prefix).port))]
  if (ports.length === 0) return
  const listeners = sc.tcpListeners()
  if (listeners === null) {
    add('warn', 'ports', 'the TCP listeners of this machine could not be listed')
    return
  }
  for (const port of ports) {
    const others = listeners.filter((l) => l.port === port && l.pid !== SYSTEM_PID)
    if (others.length === 0) {
      add('ok', 'ports', `port ${port} is free for HTTP.SYS (or already HTTP.SYS's)`)
      continue
    }
    if (others.every((l) => !(l.pid > 0))) {
      // no owner reported (Wine reports none at all): cannot tell HTTP.SYS from another program
      add('warn', 'ports', `port ${port} has a listener whose process could not be named; if it is not HTTP.SYS, HTTP.SYS cannot share the port`,
        `\`netstat -ano | findstr :${port}\` shows its pid`)
      continue
    }
    const who = [...new Set(others.map((l) => `${sc.processName(l.pid) || 'a process'} (pid ${l.pid})`))].join(', ')
    add('error', 'ports', `port ${port} is held by ${who}, not by HTTP.SYS: HTTP.SYS cannot share it (ERR_HTTPSYS_PORT_IN_USE at start)`,
      `stop that program or move it to another port (\`netstat -ano | findstr :${port}\` shows it), or give httpsys another port`)
  }
}

function checkReservations (sc, prefixes, elevated, add) {
  if (prefixes.length === 0) return
  const reservations = sc.urlAclList()
  const user = currentUser()
  let mySid = null
  try {
    mySid = user ? sc.lookupAccount(user).sid : null
  } catch {}
  for (const { app, prefix } of prefixes) {
    const covering = reservations.filter((r) => covers(r.prefix, prefix))
    if (!needsReservation(prefix)) {
      add('ok', 'urlacl', `${prefix} (${app}) needs no reservation: HTTP.SYS lets any account register http:// and https://localhost above port 1024`)
      continue
    }
    if (covering.length === 0) {
      add(elevated === true ? 'warn' : 'error', 'urlacl',
        `no URL reservation covers ${prefix} (${app}): only an elevated process can register it${elevated === true ? ' (this prompt is)' : ''}`,
        `run once, elevated: \`httpsys urlacl add ${prefix}${user ? ` --user ${user}` : ''}\` (the account \`httpsys start\` runs as)`)
      continue
    }
    for (const r of covering) {
      const entries = parseSddl(r.sddl) || []
      const names = entries.map((e) => {
        const found = sc.lookupSid(e.sid)
        return found ? found.account : e.sid
      })
      const mine = entries.some((e) => e.rights.includes('listen') && (e.sid === mySid || EVERYONE_SIDS.has(e.sid)))
      if (mine || elevated === true) {
        add('ok', 'urlacl', `${prefix} (${app}) is covered by the reservation ${r.prefix} for ${names.join(', ') || r.sddl}`)
      } else {
        add('error', 'urlacl', `${prefix} (${app}) is covered by the reservation ${r.prefix}, but for ${names.join(', ') || r.sddl}, not for ${user || 'this account'}`,
          `run elevated: \`httpsys urlacl delete ${r.prefix}\` then \`httpsys urlacl add ${r.prefix}${user ? ` --user ${user}` : ''}\` (or run httpsys as ${names[0] || 'that account'})`)
      }
    }
  }
}

function checkBindings (cert, config, prefixes, elevated, add) {
  const https = prefixes.filter((p) => p.prefix.startsWith('https://'))
  const bindings = cert.list()
  for (const { app, prefix } of https) {
    const p = urlprefix.parse(prefix)
    const match = bindings.find((b) => b.port === p.port && (
      (b.kind === 'sni' && p.hostKind === 'explicit' && b.host === p.host) ||
      (b.kind === 'ip' && (b.ip === '0.0.0.0' || b.ip === '::' || (p.hostKind === 'ip' && b.ip === p.ip)))))
    if (!match) {
      const tls = config && config.tls.find((t) => t.port === p.port && (t.host === undefined || t.host === p.host))
      add('error', 'cert', `${prefix} (${app}) has no certificate binding: HTTP.SYS would refuse every TLS handshake on port ${p.port}`,
        tls
          ? 'the config\'s tls entry gives one: run `httpsys start --setup` once, elevated'
          : `run elevated: \`httpsys cert add --port ${p.port}${p.hostKind === 'explicit' ? ` --host ${p.host}` : ''} --pfx site.pfx\` (or --thumbprint of a certificate in LocalMachine\\My)`)
    }
  }
  const ports = new Set(https.map((h) => urlprefix.parse(h.prefix).port))
  for (const b of bindings) {
    // with a config, the bindings of its ports; without, every binding on the machine
    if (config !== null && !ports.has(b.port)) continue
    if (b.problem) {
      add('error', 'cert', `the binding ${b.binding} uses the certificate ${b.thumbprint}, but ${b.problem}`,
        `bind a valid one: \`httpsys cert add --port ${b.port}${b.kind === 'sni' ? ` --host ${b.host}` : b.ip !== '0.0.0.0' ? ` --ip ${b.ip}` : ''} --pfx new.pfx\``)
    } else {
      const serves = `the binding ${b.binding} serves ${b.certificate ? b.certificate.subject : b.thumbprint}${b.certificate ? ` until ${b.certificate.notAfter.slice(0, 10)}` : ''}`
      if (b.keyUnreadable && elevated === true) {
        // an administrator can open the machine keys an elevated import makes: this one may be gone
        add('warn', 'cert', `${serves}, but its private key did not open even in this elevated prompt (${b.certificate.privateKeyProblem})`,
          `if TLS handshakes on ${b.binding} fail, import the certificate again with its key: \`httpsys cert add --port ${b.port}${b.kind === 'sni' ? ` --host ${b.host}` : b.ip !== '0.0.0.0' ? ` --ip ${b.ip}` : ''} --pfx site.pfx\``)
      } else {
        // a machine key imported elevated does not open for another account or an
        // unelevated token; HTTP.SYS uses it through LSASS, as SYSTEM
        add('ok', 'cert', b.keyUnreadable ? `${serves} (${b.keyUnreadable})` : serves)
      }
    }
    for (const note of b.notes || []) add('warn', 'cert', `${b.binding}: ${note}`)
  }
}

// ---------------------------------------------------------------------------
// Linux and macOS: the hub

async function hubChecks ({ config, hub }) {
  const findings = []
  const add = (level, area, message, fix) => findings.push(fix ? { level, area, message, fix } : { level, area, message })
  add('info', 'router', 'the router here is httpsys\'s native router: URL reservations (`httpsys urlacl`) and certificate bindings (`httpsys cert`) are HTTP.SYS\'s, on Windows; the native router needs neither')
  checkRuntimeDir(hub, add)
  const ports = new Map()
  for (const { app, prefix } of prefixesOf(config)) {
    const p = urlprefix.parse(prefix)
    if (!ports.has(p.port)) ports.set(p.port, [])
    ports.get(p.port).push(app)
  }
  const running = hub.running ? await hub.running() : null
  for (const [port, apps] of ports) {
    const state = await probePort(port)
    if (state === 'free') add('ok', 'ports', `port ${port} (${apps.join(', ')}) is free`)
    else if (state === 'EADDRINUSE') {
      if (running) {
        add('ok', 'ports', `port ${port} is served by this config's running supervisor (pid ${running.pid})`)
        continue
      }
      const owner = hub.portOwner ? hub.portOwner(port) : undefined
      add('error', 'ports', `port ${port} (${apps.join(', ')}) is already in use${owner ? ` by ${owner}` : ''}`,
        `stop that process or choose another port (\`ss -ltnp 'sport = :${port}'\` shows the owner)`)
    } else if (state === 'EACCES') {
      add('error', 'ports', `port ${port} (${apps.join(', ')}) is below 1024 and this user may not bind it`,
        `use a port >= 1024, or grant node the right once: \`sudo setcap 'cap_net_bind_service=+ep' ${process.execPath}\``)
    } else {
      add('warn', 'ports', `port ${port} could not be checked (${state})`)
    }
  }
  return findings
}

function checkRuntimeDir (hub, add) {
  const dir = hub.runtimeDir()
  let st
  try {
    st = fs.lstatSync(dir)
  } catch {
    add('ok', 'runtime', `the runtime directory ${dir} does not exist yet; httpsys creates it private (0700)`)
    return
  }
  const own = typeof process.getuid !== 'function' || st.uid === process.getuid()
  if (!st.isDirectory() || !own) {
    add('error', 'runtime', `the runtime directory ${dir} is not a directory of this user: another user could read the control tokens`,
      'remove it (or set HTTPSYS_RUNTIME_DIR to a directory of your own)')
  } else if ((st.mode & 0o077) !== 0) {
    add('error', 'runtime', `the runtime directory ${dir} is readable by others (mode ${(st.mode & 0o777).toString(8)})`, `\`chmod 700 ${dir}\``)
  } else {
    add('ok', 'runtime', `the runtime directory ${dir} is private`)
  }
}

// The supervisor's own Prometheus endpoint (metrics.listen, --metrics), on every
// platform: a taken port stops `httpsys start` before any app runs (ERR_HTTPSYS_METRICS_LISTEN).
async function checkMetrics ({ config, hub }, findings) {
  if (config === null || !config.metrics || !config.metrics.listen) return
  const { host, port } = config.metrics.listen
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
  const apps = prefixesOf(config).filter((p) => urlprefix.parse(p.prefix).port === port).map((p) => p.app)
  if (apps.length > 0) {
    findings.push({ level: 'error', area: 'metrics', message: `metrics.listen ${where} is the port of ${[...new Set(apps)].join(', ')}: the router and the metrics endpoint cannot share it`, fix: 'give metrics.listen (or --metrics) a port of its own, e.g. 127.0.0.1:9464' })
    return
  }
  const state = await tryListen({ port, host })
  if (state === 'free') {
    findings.push({ level: 'ok', area: 'metrics', message: `the metrics endpoint's ${where} is free` })
    return
  }
  const running = hub && hub.running ? await hub.running() : null
  if (state === 'EADDRINUSE' && running) {
    findings.push({ level: 'ok', area: 'metrics', message: `${where} serves the metrics of this config's running supervisor (pid ${running.pid})` })
    return
  }
  const owner = state === 'EADDRINUSE' && hub && hub.portOwner ? hub.portOwner(port) : undefined
  findings.push({
    level: 'error',
    area: 'metrics',
    message: `the metrics endpoint cannot listen on ${where}: ${state === 'EADDRINUSE' ? `the port is in use${owner ? ` by ${owner}` : ''}` : state} ` +
      '(`httpsys start` would fail with ERR_HTTPSYS_METRICS_LISTEN)',
    fix: 'choose another metrics.listen (or --metrics), e.g. 127.0.0.1:9464, or stop what holds the port'
  })
}

/** 'free', or the bind error's code */
function probePort (port) {
  return tryListen({ port, host: '::', ipv6Only: false }).then((state) => {
    if (state !== 'EAFNOSUPPORT' && state !== 'EADDRNOTAVAIL') return state
    return tryListen({ port, host: '0.0.0.0' })
  })
}

/** 'free' once a listen on `where` succeeded (and closed), or the bind error's code */
function tryListen (where) {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', (err) => resolve(err.code || 'error'))
    server.listen({ ...where, exclusive: true }, () => server.close(() => resolve('free')))
  })
}

module.exports = { doctor }
