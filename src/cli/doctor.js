'use strict'

// `httpsys doctor [-c config]`: checks the machine for the config (src/setup/doctor.js)
// and prints each finding with its fix. Exit code 0 when nothing is an error, else 1.

const { setupDeps } = require('./setup-deps')

const MARK = { ok: 'ok  ', info: 'info', warn: 'warn', error: 'FAIL' }

function register (program, deps) {
  const d = setupDeps(deps)
  program.command('doctor')
    .summary('check this machine for the config: router, ports, reservations, certificates')
    .description('Check what `httpsys start` needs here. On Windows: the HTTP.SYS addon and service, who holds each ' +
      'configured port, the URL reservations covering each prefix (and for whom), the certificate bindings of https ' +
      'prefixes and their certificates, elevation. Elsewhere: the ports and the runtime directory. Everywhere: the metrics port. Each problem comes ' +
      'with the command that fixes it. Exits 1 when something would fail.')
    .option('-c, --config <file>', 'the config file (default: ./httpsys.config.js when there is one)')
    .option('--json', 'print JSON (for scripts)')
    .action((options) => run(d, options))
}

async function run (d, options) {
  const { doctor } = require('../setup/doctor')
  const { config, problem } = await loadConfig(options.config)
  const report = await doctor({
    config,
    platform: d.platform,
    serviceConfig: d.serviceConfig,
    loadAddon: d.loadAddon,
    cert: () => require('../setup/cert').createCert(d.serviceConfig()),
    hub: hubProbe(config)
  })
  if (problem) report.findings.unshift(problem)
  const ok = !report.findings.some((f) => f.level === 'error')
  if (options.json) d.out(JSON.stringify({ ok, router: report.router, config: config && config.source.configFile, findings: report.findings }, null, 2) + '\n')
  else d.out(format(report.findings, config, report.router))
  if (!ok) process.exitCode = 1
}

async function loadConfig (file) {
  const { resolveStartConfig, findConfigFile } = require('../config')
  try {
    if (file === undefined) file = findConfigFile()
    if (file === null) return { config: null, problem: null }
    return { config: await resolveStartConfig({ config: file }), problem: null }
  } catch (err) {
    if (!err || typeof err.code !== 'string' || !err.code.startsWith('ERR_HTTPSYS_')) throw err
    return { config: null, problem: { level: 'error', area: 'config', message: err.message, fix: 'fix the config, then run `httpsys doctor` again' } }
  }
}

function hubProbe (config) {
  const controlPath = require('../supervisor/control-path')
  return {
    runtimeDir: () => controlPath.runtimeDir(),
    portOwner: (port) => require('../port-owner').findPortOwner(port),
    async running () {
      if (config === null) return null
      const { findSupervisors } = require('../supervisor/control-client')
      try {
        const found = await findSupervisors({ config: config.source.configFile })
        return found.length > 0 ? found[0] : null
      } catch {
        return null
      }
    }
  }
}

/** The findings as lines a person reads: `ok`, `info`, `warn`, `FAIL`, each fix indented below. */
function format (findings, config, router) {
  const lines = [`httpsys doctor: ${config ? config.source.configFile : 'no config (machine-wide checks only)'}; router: ${router}`]
  for (const f of findings) {
    lines.push(`${MARK[f.level]}  ${f.message}`)
    if (f.fix) lines.push(`      fix: ${f.fix}`)
  }
  const errors = findings.filter((f) => f.level === 'error').length
  const warnings = findings.filter((f) => f.level === 'warn').length
  lines.push(errors === 0 ? `no problems${warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}` : `${errors} problem${errors === 1 ? '' : 's'} to fix`)
  return lines.join('\n') + '\n'
}

module.exports = { register, format }
