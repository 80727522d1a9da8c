'use strict'

// What a config edit changes for a running supervisor (`httpsys reload`, `restart`):
// the apps added, removed, or changed and how, and the run's own settings that cannot
// change while it runs. Pure: reconfigure.js applies it (docs/supervisor.md 2.7).

// The run's own settings, made once at start: named to the user, never applied live.
const NOT_LIVE = {
  backend: 'the router is chosen at start',
  limits: 'the router takes its limits at start',
  tls: 'the certificates a config lists are loaded at start (reload reads their files again)',
  metrics: 'the metrics endpoint listens from start'
}

/**
 * @param {object} running the config the supervisor runs
 * @param {object} next the config just read (validated)
 * @param {object} [options]
 * @param {string} [options.only] one app: the rest of the config is left as it runs
 * @returns {{ added: object[], removed: string[], changed: object[], notLive: string[] }}
 *   changed: [{ name, old, app, keys, replace, notLive }] for every app in both (keys may
 *   be empty); replace: the app changed type (a queue made or dropped), so it is removed
 *   and added again; notLive: its keys that apply at the next start only
 */
function diffConfig (running, next, { only } = {}) {
  const chosen = (name) => only === undefined || name === only
  const before = new Map(running.apps.map((a) => [a.name, a]))
  const after = new Set(next.apps.map((a) => a.name))
  const removed = running.apps.filter((a) => !after.has(a.name) && chosen(a.name)).map((a) => a.name)
  const added = next.apps.filter((a) => !before.has(a.name) && chosen(a.name))
  const changed = []
  for (const app of next.apps) {
    const old = before.get(app.name)
    if (old === undefined || !chosen(app.name)) continue
    const keys = Object.keys(app).filter((k) => !same(old[k], app[k]))
    // the hub's output cache serves a queue or not from its creation
    const notLive = keys.includes('cache') && (old.cache === false) !== (app.cache === false) ? ['cache'] : []
    changed.push({ name: app.name, old, app, keys, replace: keys.includes('type'), notLive })
  }
  const notLive = only === undefined ? Object.keys(NOT_LIVE).filter((k) => !same(running[k], next[k])) : []
  return { added, removed, changed, notLive }
}

/**
 * What changed in an app, as the user reads it: `instances 2 -> 3`, `urls + X - Y`,
 * `env (API_KEY, DEBUG)` (names only: values may be secrets), else the key names.
 */
function describeChange ({ old, app, keys }) {
  const out = []
  for (const key of keys) {
    if (key === 'instances') out.push(`instances ${old.instances} -> ${app.instances}`)
    else if (key === 'urls') {
      const plus = app.urls.filter((u) => !old.urls.includes(u)).map((u) => `+ ${u}`)
      const minus = old.urls.filter((u) => !app.urls.includes(u)).map((u) => `- ${u}`)
      out.push(`urls ${[...plus, ...minus].join(' ')}`)
    } else if (key === 'env') {
      const names = [...new Set([...Object.keys(old.env), ...Object.keys(app.env)])].filter((k) => old.env[k] !== app.env[k])
      out.push(`env (${names.join(', ')})`)
    } else if (key !== 'restart_window' || !keys.some((k) => RESTART_WINDOW_FROM.includes(k))) {
      // restart_window 'auto' follows other keys: named only when it changed by itself
      out.push(key)
    }
  }
  return out
}

// the keys restart_window 'auto' is computed from (src/config/schema.js restartWindow)
const RESTART_WINDOW_FROM = ['max_restarts', 'backoff', 'ready_timeout', 'kill_timeout', 'min_uptime']

function same (a, b) {
  return JSON.stringify(a) === JSON.stringify(b)
}

module.exports = { diffConfig, describeChange, NOT_LIVE }
