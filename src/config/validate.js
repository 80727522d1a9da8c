'use strict'

// Validation happens once, here, at the edge: what leaves is a frozen, normalised config
// the supervisor trusts without checking again. Every failure names the key path as the
// user wrote it (`apps[1].instances`, or `--instances` for flags) and says how to fix it.

const path = require('node:path')
const { codes } = require('../errors')
const { appSchema, appAliases, topSchema, describe, BACKENDS, restartWindow } = require('./schema')
const { didYouMean } = require('./suggest')
const { fromPm2App, fromPm2Top } = require('./pm2-keys')

const kValidated = Symbol('httpsys.config.validated')
// problems reported at once: past this many, the rest wait for the next check
const MAX_PROBLEMS = 20
const TOP_KEYS = ['apps', ...Object.keys(topSchema)]
// env_production, env_staging, ...: selected with `--env <name>` (pm2's spelling)
const ENV_VARIANT = /^env_[A-Za-z0-9][A-Za-z0-9_.-]*$/

/**
 * @param {unknown} raw what the config file exported
 * @param {object} [options]
 * @param {string} [options.baseDir=process.cwd()] where relative paths start (the config file's directory)
 * @param {(path: Array<string|number>) => string} [options.keyLabel] how a key path is shown
 * @param {(path: Array<string|number>, value: string) => string} [options.example] how a fix example is shown
 * @param {string} [options.envName] `--env <name>`: each app's env_<name> is merged over its env
 * @param {object} [options.envFile] `--env-file` variables, under every app's own env
 * @param {boolean} [options.watch] `--watch` on a config file: watch every app that does not say otherwise
 * @param {object} [options.source] where the config came from ({ configFile }), kept as config.source
 * @param {string} [options.backend] `--backend`: wins over the file's `backend`
 * @returns {Readonly<{ backend: string, apps: ReadonlyArray<object>, limits: object, tls: object[] }>} config.source.backend
 *   says where backend came from: '--backend', 'config' or 'default'
 */
function validate (raw, options = {}) {
  const opts = {
    baseDir: path.resolve(options.baseDir || process.cwd()),
    keyLabel: options.keyLabel || formatPath,
    example: options.example || ((p, value) => `${p[p.length - 1]}: ${value}`),
    envName: options.envName,
    envFile: options.envFile || {},
    watch: options.watch === true,
    // every problem of the file, reported at once (a fix-and-rerun loop per key is slow)
    problems: [],
    // what runs differently from what the file says (pm2 keys): one line each, for the CLI
    warnings: []
  }
  const root = new Context([], opts)
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
      key: '(top level)',
      reason: `the config must be an object, got ${describe(raw)}`,
      fix: 'Export { apps: [{ name: "api", script: "api.js" }] } (module.exports = ... in httpsys.config.js).'
    })
  }
  const top = fromPm2Top(raw, root)
  opts.warnings.push(...top.warnings)
  raw = top.config
  rejectUnknown(raw, TOP_KEYS, {}, root)
  const list = raw.apps
  const at = root.at('apps')
  collect(opts, () => {
    if (list === undefined) at.fail('is required', 'Add apps: [{ script: "app.js" }].')
    if (!Array.isArray(list)) at.fail(`must be an array of apps, got ${describe(list)}`, 'Write apps: [{ script: "app.js" }].')
    if (list.length === 0) at.fail('lists no app', 'Add at least one: apps: [{ script: "app.js" }].')
  })
  const appsOk = opts.problems.length === 0
  if (appsOk && opts.envName !== undefined) checkEnvName(list, opts.envName)
  const apps = appsOk ? list.map((entry, i) => validateApp(entry, at.at(i))) : []
  // names and prefixes across apps: only once each app is whole
  if (appsOk && opts.problems.length === 0) collect(opts, () => checkAcrossApps(apps, at))
  const backend = collect(opts, () => validateBackend(raw, options.backend, root)) || {}
  const config = { backend: backend.value, apps }
  for (const [key, row] of Object.entries(topSchema)) {
    if (key === 'backend') continue
    config[key] = collect(opts, () => raw[key] === undefined ? row.default(root.at(key)) : row.check(raw[key], root.at(key)))
  }
  throwProblems(opts.problems)
  Object.defineProperty(config, kValidated, { value: true })
  // not enumerable: `config check` prints the apps, and equality in tests stays on them
  Object.defineProperty(config, 'source', {
    value: Object.freeze({ ...options.source, backend: backend.from, warnings: Object.freeze(opts.warnings) })
  })
  return deepFreeze(config)
}

function validateApp (raw, ctx) {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    ctx.fail(`must be an object describing one app, got ${describe(raw)}`, 'For example { name: "api", script: "api.js" }.')
  }
  ctx.appName = typeof raw.name === 'string' ? raw.name : undefined
  // an ecosystem file of pm2's runs as it is: its keys become ours, or a warning
  const pm2 = fromPm2App(raw, ctx, Object.keys(appSchema), (check) => collect(ctx.opts, check))
  ctx.opts.warnings.push(...pm2.warnings)
  raw = pm2.app
  rejectUnknown(raw, Object.keys(appSchema), appAliases, ctx, ENV_VARIANT)
  const app = {}
  ctx.app = app
  ctx.rawApp = raw
  const before = ctx.opts.problems.length
  for (const [key, row] of Object.entries(appSchema)) {
    const at = ctx.at(key)
    // a key that reads one that failed (name from script, watch from cwd) may throw
    // for that reason: dropped, the first cause is reported
    app[key] = collect(ctx.opts, () => {
      if (raw[key] !== undefined) return row.check(raw[key], at)
      if (row.required) at.fail('is required', row.required)
      return row.default(at)
    }, ctx.opts.problems.length > before)
  }
  if (ctx.opts.problems.length > before) return app
  app.restart_window = collect(ctx.opts, () => restartWindow(app, ctx.at('restart_window')))
  // env_<name> blocks are checked whether or not they are selected: a typo in one
  // should not wait for the day it is deployed
  let selected = {}
  for (const key of Object.keys(raw)) {
    if (!ENV_VARIANT.test(key)) continue
    const vars = collect(ctx.opts, () => appSchema.env.check(raw[key], ctx.at(key)))
    if (key === `env_${ctx.opts.envName}`) selected = vars
  }
  app.env = { ...ctx.opts.envFile, ...app.env, ...selected }
  if (ctx.opts.watch && raw.watch === undefined) app.watch = [app.cwd]
  return app
}

function validateBackend (raw, flag, root) {
  if (flag !== undefined) {
    if (!BACKENDS.includes(flag)) {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: '--backend',
        reason: `must be one of ${BACKENDS.join(', ')}, got ${describe(flag)}`,
        fix: 'For example --backend auto.'
      })
    }
    return { value: flag, from: '--backend' }
  }
  if (raw.backend === undefined) return { value: topSchema.backend.default(), from: 'default' }
  return { value: topSchema.backend.check(raw.backend, root.at('backend')), from: 'config' }
}

/** `--env staging` when no app has env_staging is a typo or a wrong file: say which exist. */
function checkEnvName (list, envName) {
  const names = new Set()
  for (const entry of list) {
    if (entry === null || typeof entry !== 'object') continue
    for (const key of Object.keys(entry)) if (ENV_VARIANT.test(key)) names.add(key.slice(4))
  }
  if (names.size === 0 || names.has(envName)) return
  const guess = didYouMean(envName, [...names])
  throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
    key: '--env',
    reason: `no app has env_${envName}`,
    fix: (guess ? `Did you mean --env ${guess}? ` : '') + `The config defines: ${[...names].map((n) => `env_${n}`).join(', ')}.`
  })
}

function checkAcrossApps (apps, ctx) {
  const names = new Map()
  const prefixes = new Map()
  apps.forEach((app, i) => {
    if (names.has(app.name)) {
      const j = names.get(app.name)
      ctx.at(i).at('name').fail(`${JSON.stringify(app.name)} is already the name of ${formatPath(['apps', j])}`,
        'Give every app its own name (set name: "..." on one of them).')
    }
    names.set(app.name, i)
    app.urls.forEach((prefix, k) => {
      const owner = prefixes.get(prefix)
      if (owner && owner.app !== app.name) {
        ctx.at(i).at('urls').at(k).fail(`${prefix} is used by both app ${JSON.stringify(owner.app)} and app ${JSON.stringify(app.name)}`,
          'Give each app its own prefix (another path or port); to run an app several times use instances instead.')
      }
      prefixes.set(prefix, { app: app.name })
    })
  })
}

// One line per unknown key: the close one when there is one, never the whole list (a
// file with five of them would repeat it five times; README "Configuration file" has it)
function rejectUnknown (obj, known, aliases, ctx, allowed) {
  for (const key of Object.keys(obj)) {
    if (known.includes(key) || (allowed && allowed.test(key))) continue
    const guess = didYouMean(key, known, aliases)
    collect(ctx.opts, () => ctx.at(key).fail('is not a known key',
      guess ? `Did you mean ${JSON.stringify(guess)}?` : `Remove it (${unknownHint(ctx, known)}).`))
  }
}

function unknownHint (ctx, known) {
  return ctx.path.length === 0
    ? `the top level holds ${known.join(', ')}`
    : '`httpsys init` writes a file listing every key of an app'
}

/**
 * Runs one check; a config problem is kept for the report instead of ending the
 * validation. With `afterProblem`, an error that is not a config problem is dropped
 * (a consequence of the earlier problem, not a bug).
 */
function collect (opts, check, afterProblem = false) {
  try {
    return check()
  } catch (err) {
    if (!err || err.code !== 'ERR_HTTPSYS_CONFIG_INVALID') {
      if (afterProblem) return undefined
      throw err
    }
    opts.problems.push(err)
    if (opts.problems.length >= MAX_PROBLEMS) throwProblems(opts.problems)
    return undefined
  }
}

/** One error for every problem: the first one's key and words, the others listed after it. */
function throwProblems (problems) {
  if (problems.length === 0) return
  if (problems.length === 1) throw problems[0]
  const [first, ...more] = problems
  throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
    key: first.key,
    reason: first.reason,
    fix: first.fix,
    app: first.app,
    more: more.map((p) => ({ key: p.key, reason: p.reason, fix: p.fix }))
  })
}

class Context {
  constructor (keyPath, opts, parent) {
    this.path = keyPath
    this.opts = opts
    this.baseDir = opts.baseDir
    this.app = parent ? parent.app : undefined
    this.appName = parent ? parent.appName : undefined
    this.rawApp = parent ? parent.rawApp : undefined
  }

  get name () { return String(this.path[this.path.length - 1]) }

  get label () { return this.opts.keyLabel(this.path) }

  at (segment) { return new Context([...this.path, segment], this.opts, this) }

  /** an example assignment for this key, in the syntax the user wrote it in */
  ex (value) { return this.opts.example(this.path, value) }

  fail (reason, fix, cause) {
    reason = String(reason).replace(/\.+$/, '')
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({ key: this.label, reason, fix, app: this.appName, cause })
  }
}

function formatPath (keyPath) {
  let out = ''
  for (const seg of keyPath) {
    if (typeof seg === 'number') out += `[${seg}]`
    else if (/^[A-Za-z_$][\w$]*$/.test(seg)) out += (out ? '.' : '') + seg
    else out += `[${JSON.stringify(seg)}]`
  }
  return out || '(top level)'
}

function deepFreeze (value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

const isValidated = (config) => Boolean(config && config[kValidated])

module.exports = { validate, isValidated, formatPath }
