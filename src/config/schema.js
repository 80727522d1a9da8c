'use strict'

// The config schema as one table: a row per key, in the order keys are checked (a row
// may use the values of the rows above it, e.g. `script` resolves against `cwd`).
// The supervisor issue adds its rows (restart, backoff, watch, logs, ...) here and
// nothing else changes. Row fields:
//   doc      one line for `httpsys config check` and the README
//   required the key must be present (fix: what to add)
//   default  (ctx) => value when the key is absent; not passed through check
//   check    (value, ctx) => normalised value; ctx.fail(reason, fix) rejects it

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { codes } = require('../errors')
const { parseDuration } = require('./duration')

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/**
 * `instances` as users write it: an integer >= 1, a string of digits (from the CLI),
 * or 'max' for one per CPU.
 * @returns {number|undefined} undefined when the value is none of these
 */
function parseInstances (value) {
  if (value === 'max') return cpuCount()
  if (typeof value === 'string' && /^\d+$/.test(value)) value = Number(value)
  return Number.isSafeInteger(value) && value >= 1 ? value : undefined
}

function cpuCount () {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
}

const describe = (v) => v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`

function expectString (value, ctx, example) {
  if (typeof value !== 'string' || value.trim() === '') {
    ctx.fail(`must be a non-empty string, got ${describe(value)}`, `For example ${ctx.ex(example)}.`)
  }
  return value
}

/** string (split on whitespace; no quoting) or array of strings -> array of strings */
function stringList (value, ctx, example) {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean)
  if (!Array.isArray(value)) {
    ctx.fail(`must be a string or an array of strings, got ${describe(value)}`, `For example ${ctx.ex(example)}.`)
  }
  value.forEach((item, i) => {
    if (typeof item !== 'string') {
      ctx.at(i).fail(`must be a string, got ${describe(item)}`, `Quote it: ${JSON.stringify(String(item))}.`)
    }
  })
  return value.slice()
}

const appSchema = {
  cwd: {
    doc: 'directory the app runs in; relative paths start at the config file',
    default: (ctx) => ctx.baseDir,
    check (value, ctx) {
      const dir = path.resolve(ctx.baseDir, expectString(value, ctx, '"./api"'))
      let stat
      try { stat = fs.statSync(dir) } catch {}
      if (!stat || !stat.isDirectory()) {
        ctx.fail(`directory ${dir} does not exist`, 'Create it or fix the path (relative paths start at the config file).')
      }
      return dir
    }
  },
  script: {
    doc: 'the file node runs, relative to cwd',
    required: 'Add script: "app.js" (the file node runs).',
    check (value, ctx) {
      const file = path.resolve(ctx.app.cwd, expectString(value, ctx, '"app.js"'))
      if (!scriptExists(file)) {
        throw new codes.ERR_HTTPSYS_SCRIPT_NOT_FOUND({ script: file, app: ctx.appName, key: ctx.label })
      }
      return file
    }
  },
  name: {
    doc: 'the app name (logs, queue name); default: the script name without extension',
    default: (ctx) => path.basename(ctx.app.script, path.extname(ctx.app.script)).replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 64) || 'app',
    check (value, ctx) {
      if (typeof value !== 'string' || !NAME.test(value)) {
        ctx.fail(`must be 1-64 letters, digits, ".", "_" or "-" starting with a letter or digit, got ${describe(value)}`, `For example ${ctx.ex('"api"')}.`)
      }
      return value
    }
  },
  urls: {
    doc: 'URL prefixes routed to this app (http://+:8080/api/); none: the app\'s listen() decides',
    default: () => [],
    check (value, ctx) {
      const { normalize } = require('../urlprefix')
      const list = typeof value === 'string' ? [value] : value
      if (!Array.isArray(list)) {
        ctx.fail(`must be a URL prefix or an array of them, got ${describe(value)}`, 'For example urls: ["http://+:8080/api/"].')
      }
      const out = []
      list.forEach((item, i) => {
        const at = typeof value === 'string' ? ctx : ctx.at(i)
        if (typeof item !== 'string') at.fail(`must be a string, got ${describe(item)}`, 'For example "http://+:8080/".')
        let prefix
        try {
          prefix = normalize(item)
        } catch (err) {
          if (err.code !== 'ERR_HTTPSYS_BAD_PREFIX') throw err
          at.fail(`${JSON.stringify(item)} is not a URL prefix: ${err.reason || err.message}`,
            'A prefix reads scheme://host:port/path/, for example http://+:8080/api/.', err)
        }
        if (!out.includes(prefix)) out.push(prefix)
      })
      return out
    }
  },
  instances: {
    doc: 'how many processes serve the app from its one queue (an integer, or "max": one per CPU)',
    default: () => 1,
    check (value, ctx) {
      const n = parseInstances(value)
      if (n === undefined) {
        ctx.fail(`must be an integer >= 1 or "max", got ${describe(value)}`, `For example ${ctx.ex('2')}, or ${ctx.ex('"max"')} for one per CPU.`)
      }
      return n
    }
  },
  args: {
    doc: 'arguments for the script (process.argv.slice(2))',
    default: () => [],
    check: (value, ctx) => stringList(value, ctx, '["--verbose", "--port", "3000"]')
  },
  node_args: {
    doc: 'arguments for node itself, before the script (e.g. --max-old-space-size=512)',
    default: () => [],
    check: (value, ctx) => stringList(value, ctx, '["--max-old-space-size=512"]')
  },
  env: {
    doc: 'environment variables added to the app\'s (values: strings, numbers or booleans)',
    default: () => ({}),
    check (value, ctx) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        ctx.fail(`must be an object of variables, got ${describe(value)}`, 'For example env: { NODE_ENV: "production" }.')
      }
      const out = {}
      for (const [key, v] of Object.entries(value)) {
        if (key === '' || key.includes('=') || key.includes('\0')) {
          ctx.at(key).fail('is not a valid environment variable name', 'Use a name without "=", e.g. NODE_ENV.')
        }
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
          ctx.at(key).fail(`must be a string, number or boolean, got ${describe(v)}`, `For example ${key}: "value".`)
        }
        out[key] = String(v)
      }
      return out
    }
  },
  kill_timeout: {
    doc: 'how long a stopping app may take before it is killed (ms, or "10s")',
    default: () => 5000,
    check (value, ctx) {
      const ms = parseDuration(value)
      if (ms === undefined) {
        ctx.fail(`must be a duration, got ${describe(value)}`, `For example ${ctx.ex('5000')} (milliseconds) or ${ctx.ex('"5s"')}.`)
      }
      return ms
    }
  }
}

// Other tools' spellings, so their users get pointed at ours.
const appAliases = {
  prefix: 'urls',
  prefixes: 'urls',
  url: 'urls',
  port: 'urls',
  exec: 'script',
  file: 'script',
  main: 'script',
  argv: 'args',
  nodeArgs: 'node_args',
  interpreter_args: 'node_args',
  execArgv: 'node_args',
  exec_mode: 'instances',
  workers: 'instances',
  killTimeout: 'kill_timeout'
}

function scriptExists (file) {
  try {
    // node runs `node dir` and `node app` (no extension) as require() resolves them
    return fs.existsSync(file) || Boolean(require.resolve(file))
  } catch {
    return false
  }
}

module.exports = { appSchema, appAliases, parseInstances, cpuCount, describe }
