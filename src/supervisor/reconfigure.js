'use strict'

// A config edit applied to a running supervisor (docs/supervisor.md 2.7): `httpsys
// reload` and `restart` read the config again (a config that fails its checks changes
// nothing), then apply what changed with no request lost, in this order:
//
//   1. apps removed: their prefixes leave the router first (no new request reaches
//      them), the requests waiting in their queue go to their workers, then the workers
//      are drained and stopped and the queue goes
//   2. apps changed: prefixes added (a port in use fails that app alone, unchanged),
//      the new settings, prefixes dropped, instances added (started) or removed (drained)
//   3. apps added: queue, then workers, as at start
//   4. every app of the command (not the ones just added) is replaced: the rolling
//      reload (2.4), or a hard restart
//
// `httpsys scale` is step 2 for the instances alone, without reading the config.

const { codes } = require('../errors')
const { MAX_INSTANCES } = require('../config/schema')
const { diffConfig, describeChange, NOT_LIVE } = require('./config-diff')
const { waitReady } = require('./instance')

const LOG_KEYS = ['log_dir', 'log_max_size', 'log_daily', 'log_keep']

/**
 * @param {import('./supervisor').Supervisor} sup
 * @param {string} [name] an app, or 'all'
 * @param {'reload'|'restart'} mode
 * @returns {Promise<object[]>} one entry per app ({ app, ok, action, ms, pids, changes,
 *   reason?, notLive? }), then { notLive: [{ key, why }] } when the run's own settings
 *   changed, then the config certificate files that did not load again ({ tls, ... })
 * @throws the config's own error (ERR_HTTPSYS_CONFIG_INVALID, ...) when it cannot be
 *   read or fails its checks: then nothing changed
 */
async function reconfigure (sup, name, mode) {
  // edits apply one at a time; the replacements after them join a reload that runs
  // (one follow-up for any number of requests: app-group.js)
  const edit = await sup.oneAtATime(() => applyEdit(sup, name, mode))
  const { only, diff, results, fresh, before, failed, addedNames, next, t0 } = edit
  const targets = sup.groups.filter((g) => (only === undefined || g.name === only) && !addedNames.has(g.name) && !failed.has(g.name))
  const certs = mode === 'reload' && sup.router && typeof sup.router.reloadTls === 'function' ? sup.router.reloadTls() || [] : []
  await Promise.all(targets.map(async (group) => {
    const change = diff.changed.find((c) => c.name === group.name)
    const common = { app: group.name, changes: change ? describeChange(change) : [], notLive: change && change.notLive.length ? change.notLive : undefined }
    if (mode === 'restart') {
      const t = Date.now()
      sup.setAvailable(group, true)
      await group.restart()
      results.set(group.name, { ...common, ok: true, action: 'restarted', ms: Date.now() - t, pids: group.instances.map((i) => i.pid).filter(Boolean) })
      return
    }
    const [roll, added] = await Promise.all([group.reload('command', before.get(group)), readyAll(fresh.get(group) || [])])
    const why = !roll.ok ? roll.reason : added.find((r) => !r.ok)?.reason
    const bad = why === undefined ? undefined : `a new process ${why}`
    results.set(group.name, {
      ...common,
      ok: bad === undefined,
      action: 'reloaded',
      ms: roll.ms,
      reason: bad,
      pids: [...roll.instances.map((i) => i.pid), ...added.map((r) => r.pid)].filter(Boolean)
    })
  }))
  sup.checkSettled()
  if (next !== null) {
    sup.logger.info({ event: 'config:done', mode, ms: Date.now() - t0, failed: [...results.values()].filter((r) => !r.ok).map((r) => r.app) },
      `config applied in ${Date.now() - t0} ms`)
  }
  const order = new Map(sup.groups.map((g, i) => [g.name, i]))
  return [
    ...[...results.values()].sort((a, b) => (order.get(a.app) ?? -1) - (order.get(b.app) ?? -1)),
    ...(diff.notLive.length ? [{ notLive: diff.notLive.map((key) => ({ key, why: NOT_LIVE[key] })) }] : []),
    ...certs.filter((c) => c.error).map((c) => ({ tls: c.label, ok: false, code: c.error.code || null, message: c.error.message }))
  ]
}

/** Steps 1 to 3: the config read again and applied; what step 4 replaces. */
async function applyEdit (sup, name, mode) {
  const only = name === undefined || name === 'all' ? undefined : name
  const next = await readAgain(sup)
  if (next !== null && only !== undefined && sup.findGroup(only) === undefined && !next.apps.some((a) => a.name === only)) {
    throw new codes.ERR_HTTPSYS_APP_NOT_FOUND({ app: only, known: sup.groups.map((g) => g.name) })
  }
  if (next === null) sup.select(name)
  const t0 = Date.now()
  const diff = next !== null ? diffConfig(sup.config, next, { only }) : { added: [], removed: [], changed: [], notLive: [] }
  // HTTP.SYS authenticates by the queue's URL group, set up when the queue is made (the
  // native router's stand-in, dev_identity, reaches the workers with the reload)
  if (sup.backend && sup.backend.backend === 'httpsys') {
    for (const c of diff.changed) if (c.keys.includes('auth')) c.notLive.push('auth')
  }
  const results = new Map()
  const fresh = new Map() // group -> instances added and started by this edit
  const before = new Map() // group -> its instances from before the edit that it keeps
  const failed = new Set()
  if (next !== null) record(sup, diff, mode)

  const replaced = diff.changed.filter((c) => c.replace)
  await Promise.all([...diff.removed, ...replaced.map((c) => c.name)].map(async (n) => {
    const ms = await removeApp(sup, sup.findGroup(n))
    if (diff.removed.includes(n)) results.set(n, { app: n, ok: true, action: 'removed', ms, pids: [], changes: [] })
  }))

  for (const change of diff.changed.filter((c) => !c.replace)) {
    const group = sup.findGroup(change.name)
    if (group === undefined) continue
    before.set(group, group.instances.slice(0, change.app.instances))
    try {
      const added = await applyApp(sup, group, change, mode)
      if (added.length > 0) fresh.set(group, added)
    } catch (err) {
      failed.add(change.name)
      const reason = `its new settings were not applied (it runs as before): ${err.message}`
      const pids = group.instances.map((i) => i.pid).filter(Boolean)
      results.set(change.name, { app: change.name, ok: false, action: `${mode}ed`, pids, changes: describeChange(change), code: err.code || null, reason })
    }
  }

  const addedNames = new Set()
  for (const app of [...diff.added, ...replaced.map((c) => c.app)]) {
    addedNames.add(app.name)
    const action = diff.added.includes(app) ? 'added' : 'replaced'
    const changes = action === 'added' ? [] : describeChange(replaced.find((c) => c.app === app))
    results.set(app.name, { app: app.name, action, changes, ...(await addApp(sup, app)) })
  }
  // the groups run the new config now (in its order); the run's own settings stay
  if (next !== null) {
    const order = new Map(next.apps.map((a, i) => [a.name, i]))
    sup.groups.sort((a, b) => (order.get(a.name) ?? Infinity) - (order.get(b.name) ?? Infinity))
    sup.setApps()
    sup.watchMemory()
  }

  return { only, diff, results, fresh, before, failed, addedNames, next, t0 }
}

/**
 * `httpsys scale <app> <n>`: the app runs n instances from now on, without reading the
 * config (pm2's scale); a later reload or start applies the config's instances again.
 * @returns {Promise<{ app, ok, from, to, configured, ms, pids, reason? }>}
 */
async function scale (sup, name, count) {
  const group = sup.findGroup(name)
  if (group === undefined || name === 'all') throw new codes.ERR_HTTPSYS_APP_NOT_FOUND({ app: name, known: sup.groups.map((g) => g.name) })
  // '+2': that many more than run now
  const n = typeof count === 'string' && count.startsWith('+') ? group.instances.length + Number(count.slice(1)) : Number(count)
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_INSTANCES) {
    throw new codes.ERR_INVALID_ARG_VALUE({ name: 'instances', value: count, reason: `must be an integer from 1 to ${MAX_INSTANCES}` })
  }
  if (n > 1 && sup.router && sup.router.wine) {
    throw new codes.ERR_INVALID_ARG_VALUE({ name: 'instances', value: count, reason: 'must be 1 under Wine, whose HTTP.SYS shares no queue between processes' })
  }
  const t0 = Date.now()
  const from = group.instances.length
  const done = (extra) => ({ app: group.name, from, to: n, configured: group.configured, ms: Date.now() - t0, ...extra })
  if (n === from) return done({ ok: true, pids: group.instances.map((i) => i.pid).filter(Boolean) })
  sup.logger.info({ event: 'scale', app: group.name, from, to: n }, `scaling from ${from} to ${n} instance(s)`)
  await group.setApp(Object.freeze({ ...group.app, instances: n }))
  let added = []
  if (n > from) {
    const instances = group.addInstances(n)
    for (const instance of instances) sup.watchInstance(group, instance)
    if (!group.stopped) for (const instance of instances) instance.start()
    added = group.stopped ? [] : await readyAll(instances)
  } else {
    await group.removeInstances(n)
  }
  sup.setApps()
  const bad = added.find((r) => !r.ok)
  return done({ ok: bad === undefined, reason: bad && `a new process ${bad.reason}`, pids: group.instances.map((i) => i.pid).filter(Boolean) })
}

/** The config read again; null when this run has no way to (a config given as an object). */
async function readAgain (sup) {
  if (typeof sup.reread !== 'function') return null
  try {
    return await sup.reread()
  } catch (err) {
    const refused = new Error(`the config was not applied, nothing changed (every app runs as before): ${err.message}`)
    refused.code = err.code || 'ERR_HTTPSYS_CONFIG_INVALID'
    throw refused
  }
}

function record (sup, diff, mode) {
  const changed = diff.changed.map((c) => ({ app: c.name, changes: describeChange(c) })).filter((c) => c.changes.length > 0)
  const parts = [
    ...diff.added.map((a) => `${a.name} added`),
    ...diff.removed.map((n) => `${n} removed`),
    ...changed.map((c) => `${c.app}: ${c.changes.join(', ')}`),
    ...diff.notLive.map((k) => `${k} changed (applies at the next start)`)
  ]
  sup.logger.info({ event: 'config', mode, added: diff.added.map((a) => a.name), removed: diff.removed, changed, notLive: diff.notLive },
    `config read again for ${mode}: ${parts.length ? parts.join('; ') : 'no change'}`)
}

/** An app the config no longer has: unrouted, its queue emptied by its workers, drained, gone. */
async function removeApp (sup, group) {
  const t0 = Date.now()
  const router = sup.router
  const web = group.app.type !== 'worker' && router !== null
  if (web && typeof router.unroute === 'function') {
    router.unroute(group.name)
    await queueEmptied(sup, group.name, group.app.kill_timeout / 2)
  }
  await group.stop()
  sup.groups.splice(sup.groups.indexOf(group), 1)
  if (web) {
    try {
      await router.deleteQueue(group.name)
    } catch {}
  }
  sup.logs.removeFile(group.name)
  sup.logger.info({ event: 'app-removed', app: group.name, ms: Date.now() - t0 }, `${group.name} removed from the config: stopped in ${Date.now() - t0} ms`)
  return Date.now() - t0
}

/** Requests already waiting in the queue are the app's to answer before it stops. */
async function queueEmptied (sup, name, ms) {
  const end = Date.now() + ms
  for (;;) {
    const stats = sup.queueStats(name)
    if (stats === null || !(stats.waiting > 0) || Date.now() >= end) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * One app's new settings: its prefixes (added, then dropped), what its next processes
 * start with, its log file and watcher, its number of instances.
 * @returns {Promise<Instance[]>} the instances added and started (reload)
 */
async function applyApp (sup, group, { app, keys }, mode) {
  const router = sup.router
  if (app.type !== 'worker' && (keys.includes('urls') || keys.includes('redirect_http'))) {
    if (typeof router.setUrls !== 'function') throw new Error('this router cannot change an app\'s URLs while it runs: `httpsys stop all`, then start again')
    await router.setUrls(app.name, app.urls, { redirectHttp: app.redirect_http })
  }
  if (keys.some((k) => LOG_KEYS.includes(k))) {
    sup.logs.removeFile(app.name)
    sup.openLogFile(app)
  }
  // Windows authentication on HTTP.SYS's URL groups, before any new worker takes a request
  if (keys.includes('auth') && typeof router.setAuth === 'function') router.setAuth(app.name, app.auth)
  await group.setApp(app, sup.routerEnvOf(app, router))
  group.configured = app.instances
  if (app.instances < group.instances.length) {
    await group.removeInstances(app.instances)
    return []
  }
  const added = group.addInstances(app.instances)
  for (const instance of added) sup.watchInstance(group, instance)
  // a restart starts every instance itself; a stopped app stays stopped
  if (mode === 'restart' || group.stopped) return []
  for (const instance of added) instance.start()
  return added
}

/** An app new in the config: its queue (a port in use fails it alone), then its workers. */
async function addApp (sup, app) {
  const t0 = Date.now()
  const router = sup.router
  try {
    if (app.type !== 'worker') await router.createQueue(app.name, { urls: app.urls, redirectHttp: app.redirect_http, cache: app.cache !== false, auth: app.auth })
  } catch (err) {
    return { ok: false, ms: Date.now() - t0, pids: [], code: err.code || null, reason: `it was not started: ${err.message}` }
  }
  sup.openLogFile(app)
  const group = sup.createGroup(app, router)
  sup.groups.push(group)
  await group.start()
  const ready = await readyAll(group.instances)
  const bad = ready.find((r) => !r.ok)
  return { ok: bad === undefined, ms: Date.now() - t0, pids: ready.map((r) => r.pid).filter(Boolean), reason: bad && `its process ${bad.reason}` }
}

/** Each instance's first process ready, or why not. */
function readyAll (instances) {
  return Promise.all(instances.map(async (i) => {
    const proc = i.proc
    if (proc === null) return { ok: false, reason: 'was not started' }
    const result = await waitReady(proc)
    return { ...result, pid: proc.pid }
  }))
}

module.exports = { reconfigure, scale }
