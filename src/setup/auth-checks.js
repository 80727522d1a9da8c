'use strict'

// `httpsys doctor`'s word on Windows authentication (README "Windows authentication"):
// which schemes each app has; on HTTP.SYS, for Negotiate and Kerberos, which host names
// look like they need a service principal name; on the hub, whether the app can start at
// all (a development identity, or ERR_HTTPSYS_AUTH_UNAVAILABLE). Nothing here is checked
// against Active Directory (that needs a domain account and LDAP): a missing SPN is a
// warning with the `setspn` line to run, never an error, and nothing at start depends on it.

const os = require('node:os')
const urlprefix = require('../urlprefix')
const { SCHEMES, DEV_ENV, devIdentityFromEnv } = require('../windows-auth')

/**
 * @param {object|null} config a validated config
 * @param {string} platform
 * @param {(level: string, area: string, message: string, fix?: string) => void} add
 * @param {object} [machine] { env, hostname } (tests)
 */
function checkAuth (config, platform, add, { env = process.env, hostname = os.hostname() } = {}) {
  if (config === null) return
  for (const app of config.apps) {
    if (!app.auth || app.type === 'worker') continue
    const schemes = app.auth.schemes.map((s) => SCHEMES[s]).join(', ')
    let dev = null
    try {
      dev = devIdentityFromEnv(app.env[DEV_ENV] !== undefined ? app.env[DEV_ENV] : env[DEV_ENV]) || app.auth.dev_identity
    } catch (err) {
      add('error', 'auth', `${DEV_ENV} is not a development identity: ${err.message}`, `set it to a name (${DEV_ENV}=DEV\\alice) or unset it`)
    }
    if (platform !== 'win32') {
      if (dev) {
        add('warn', 'auth', `${app.name}: the native router hands every request the development identity ${dev.user} (${schemes} on HTTP.SYS): this authenticates nobody`,
          'run it on Windows (HTTP.SYS) wherever it must know who its users are')
      } else {
        add('error', 'auth', `${app.name} asks for Windows authentication (${schemes}), which the native router cannot do: \`httpsys start\` fails with ERR_HTTPSYS_AUTH_UNAVAILABLE`,
          `run it on Windows, or give it a development identity to work on it here: auth.dev_identity: { user: 'DEV\\\\alice' } (or ${DEV_ENV}=DEV\\alice)`)
      }
      continue
    }
    add('info', 'auth', `${app.name}: HTTP.SYS authenticates ${schemes}; ` +
      (app.auth.anonymous ? 'a request without credentials reaches the app anonymous (req.windowsIdentity null)' : 'a request without credentials gets 401 with the challenges'))
    if (dev) add('info', 'auth', `${app.name}: its development identity (${dev.user}) is ignored on HTTP.SYS`)
    if (app.auth.schemes.includes('negotiate') || app.auth.schemes.includes('kerberos')) checkSpns(app, env, hostname, add)
  }
}

// Kerberos tickets name the service by its host (HTTP/<host>): HTTP.SYS decrypts them
// with this computer's account (kernel-mode authentication), which holds HOST/<its own
// names> and so covers HTTP/ for those. Any other name a prefix gives (a DNS alias, a
// load-balanced name) needs an SPN of its own on the computer's account, or browsers
// fall back to NTLM (or fail, where NTLM is turned off).
function checkSpns (app, env, hostname, add) {
  const computer = (env.COMPUTERNAME || hostname || '').split('.')[0]
  const domain = env.USERDNSDOMAIN || ''
  const own = new Set([computer, domain ? `${computer}.${domain}` : null, hostname, 'localhost'].filter(Boolean).map((h) => h.toLowerCase()))
  const seen = new Set()
  for (const url of app.urls) {
    const p = urlprefix.parse(url)
    if (p.hostKind !== 'explicit' || own.has(p.host) || seen.has(p.host)) continue
    seen.add(p.host)
    add('warn', 'auth', `${app.name}: Kerberos for ${p.host} needs the service principal name HTTP/${p.host} on this computer's account; without it clients use NTLM, or fail where NTLM is off`,
      `once, as a domain administrator: \`setspn -S HTTP/${p.host} ${computer || '<this computer>'}\` (\`setspn -Q HTTP/${p.host}\` shows whether one exists, and where)`)
  }
}

module.exports = { checkAuth }
