'use strict'

// The config schema as one table: a row per key, in the order keys are checked (a row
// may use the values of the rows above it, e.g. `script` resolves against `cwd`).
// Besides these rows an app may hold env_<name> blocks (validate.js merges the one
// `--env <name>` selects). Row fields:
//   doc      one line for `httpsys config check` and the README
//   required the key must be present (fix: what to add)
//   default  (ctx) => value when the key is absent; not passed through check
//   check    (value, ctx) => normalised value; ctx.fail(reason, fix) rejects it

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { codes } = require('../errors')
const { parseDuration, MAX_DURATION_MS, MAX_DURATION_TEXT } = require('./duration')
const { parseSize } = require('./size')
const { backoffDelay } = require('./backoff')
const { resolveScript } = require('./resolve-script')
const { onPath } = require('../sea/worker-node')

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const RESERVED_NAME = 'all'

// max_memory_restart below this reloads an app before it has served anything
const MIN_MEMORY_RESTART = 64 * 1024 * 1024

// Each instance is a node process of its own (tens of MB, a connection to the router):
// a typo such as 10000 would fork until the machine runs out of memory or pids (issue 23)
const MAX_INSTANCES = 1024

/**
 * `instances` as users write it: an integer >= 1, a string of digits (from the CLI),
 * or 'max' for one per CPU (at most MAX_INSTANCES).
 * @returns {number|undefined} undefined when the value is none of these
 */
function parseInstances (value) {
  if (value === 'max') return Math.min(cpuCount(), MAX_INSTANCES)
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
      const resolved = resolveScript(file)
      if (resolved.error) {
        ctx.fail(`${file} ${resolved.error}`, 'Point script at the JavaScript file (for a package bin: the file its package.json "bin" names).')
      }
      return resolved.file
    }
  },
  name: {
    doc: 'the app name (logs, queue name); default: the script name without extension',
    // named after the script as given: a package bin or .cmd shim resolves to its
    // package's entry (often index.js), but users know the app by the shim's name
    default: (ctx) => notReserved(nameOf(typeof ctx.rawApp?.script === 'string' ? ctx.rawApp.script : ctx.app.script), ctx),
    check (value, ctx) {
      if (typeof value !== 'string' || !NAME.test(value)) {
        ctx.fail(`must be 1-64 letters, digits, ".", "_" or "-" starting with a letter or digit, got ${describe(value)}`, `For example ${ctx.ex('"api"')}.`)
      }
      return notReserved(value, ctx)
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
      if (n > MAX_INSTANCES) {
        ctx.fail(`must be at most ${MAX_INSTANCES}, got ${describe(value)}`,
          `Each instance is a node process of its own: ${ctx.ex('"max"')} runs one per CPU, usually the most that helps.`)
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
  node: {
    doc: 'the node that runs the app: a path, a name on the PATH, or "self" (the node httpsys runs on); ' +
      'default: that one, or from the single executable a node >= 20 on the PATH, else its own',
    default: () => undefined,
    check (value, ctx) {
      expectString(value, ctx, '"/usr/local/bin/node"')
      if (value === 'self') return value
      const file = /[\\/]/.test(value) ? path.resolve(ctx.baseDir, value) : onPath(value)
      let stat
      try { stat = file && fs.statSync(file) } catch {}
      if (!stat || !stat.isFile()) {
        ctx.fail(file ? `${file} is not a file` : `no ${JSON.stringify(value)} on the PATH`,
          `Give the path of a node binary, for example ${ctx.ex('"/usr/local/bin/node"')}, or ${ctx.ex('"self"')}.`)
      }
      return file
    }
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
    doc: 'how long a stopping instance may take (drain, then its own shutdown) before its process tree is killed',
    default: () => 10000,
    check: (value, ctx) => duration(value, ctx, '"10s"')
  },
  restart: {
    doc: 'when an instance that exited by itself is started again: "always", "on-failure" (exit code not 0, or a signal) or "never"',
    default: () => 'always',
    check: (value, ctx) => oneOf(value, ctx, RESTART_MODES)
  },
  stop_exit_codes: {
    doc: 'exit codes that mean "done, do not restart" (e.g. [0] for a job that finishes)',
    default: () => [],
    check (value, ctx) {
      const list = Array.isArray(value) ? value : [value]
      list.forEach((code, i) => {
        if (!Number.isInteger(code) || code < 0 || code > 255) {
          (Array.isArray(value) ? ctx.at(i) : ctx).fail(`must be an exit code (0-255), got ${describe(code)}`, `For example ${ctx.ex('[0]')}.`)
        }
      })
      return [...new Set(list)]
    }
  },
  backoff: {
    doc: 'restart delay: initial * factor^n up to max, less up to jitter of it, never below initial; n resets after reset_after ready',
    default: () => ({ ...BACKOFF_DEFAULTS }),
    check: (value, ctx) => subObject(value, ctx, backoffSchema, BACKOFF_DEFAULTS, '{ initial: "200ms", max: "30s" }')
  },
  min_uptime: {
    doc: 'an exit sooner than this after ready (or before ready) is unstable and counts towards max_restarts',
    default: () => 5000,
    check: (value, ctx) => duration(value, ctx, '"5s"')
  },
  max_restarts: {
    doc: 'this many unstable exits within restart_window put the instance in "errored" (0: never give up)',
    default: () => 10,
    check: (value, ctx) => integer(value, ctx, 0, '10')
  },
  restart_window: {
    doc: 'the sliding window in which max_restarts unstable exits are counted; "auto": long enough for max_restarts exits at the backoff cap ' +
      '(max_restarts x (backoff.max + ready_timeout + kill_timeout + min_uptime)); 0: no window (since the last stable run)',
    default: () => 'auto',
    check: (value, ctx) => value === 'auto' ? value : duration(value, ctx, '"auto"')
  },
  type: {
    doc: '"web": serves HTTP through its queue; "worker": serves no HTTP (a queue consumer, a cron job): no queue, no preload, ready once started (or at process.send("ready") with wait_ready)',
    default: () => 'web',
    check (value, ctx) {
      oneOf(value, ctx, APP_TYPES)
      if (value === 'worker' && ctx.app.urls.length > 0) {
        ctx.fail('is "worker", which serves no HTTP, but the app has urls', 'Remove its urls, or make it type: "web".')
      }
      return value
    }
  },
  wait_ready: {
    doc: 'the app says when it is ready with process.send("ready") instead of on its first listen()',
    default: () => false,
    check: (value, ctx) => bool(value, ctx)
  },
  ready_timeout: {
    doc: 'an instance not ready this long after its start has failed (0: wait for ever); ready is its process.send("ready") with wait_ready, else its first listen()',
    default: () => 30000,
    check: (value, ctx) => duration(value, ctx, '"30s"', 0, 'for ever')
  },
  listen_timeout: {
    doc: 'a web app\'s process that has not called listen() this long after its start is stopped by httpsys: a failed start (0: wait for ever)',
    default: () => 30000,
    check: (value, ctx) => duration(value, ctx, '"30s"', 0, 'for ever')
  },
  max_memory_restart: {
    doc: 'reload an instance whose memory (RSS) stays above this over several samples ("300M"; 0: off)',
    default: () => 0,
    check (value, ctx) {
      const bytes = parseSize(value)
      if (bytes === undefined) {
        ctx.fail(`must be a size, got ${describe(value)}`, `For example ${ctx.ex('"300M"')} or ${ctx.ex('"1G"')}.`)
      }
      // a bare number is bytes (as in pm2): 300 would reload the app every few seconds for ever
      if (bytes > 0 && bytes < MIN_MEMORY_RESTART) {
        const digits = typeof value === 'number' || /^\s*\d+\s*$/.test(value)
        const meant = digits && Number(value) * 1024 * 1024 >= MIN_MEMORY_RESTART ? `"${Number(value)}M"` : null
        ctx.fail(`must be at least 64M (node with the preload takes about 50M before the app loads anything), got ${describe(value)}` +
          (digits ? ' bytes' : ''), meant ? `Did you mean ${ctx.ex(meant)}?` : `For example ${ctx.ex('"300M"')} (0 turns it off).`)
      }
      return bytes
    }
  },
  watch: {
    doc: 'reload when files change: true (the app\'s cwd), or paths relative to cwd; node_modules, dotfiles and log_dir are never watched',
    default: () => [],
    check (value, ctx) {
      if (value === false) return []
      if (value === true) return [ctx.app.cwd]
      // "true" in quotes would be a path named true: almost always a typo for the boolean
      if (value === 'true' || value === 'false') ctx.fail(`must be true or false without quotes, or paths; got the string ${JSON.stringify(value)}`, `Write watch: ${value}.`)
      return stringList(value, ctx, '["src", "config"]').map((p) => path.resolve(ctx.app.cwd, p))
    }
  },
  ignore_watch: {
    doc: 'paths or globs (relative to cwd; * and ** allowed) whose changes do not reload',
    default: () => [],
    check: (value, ctx) => stringList(value, ctx, '["uploads", "**/*.tmp"]')
  },
  watch_delay: {
    doc: 'quiet time after the last change before the reload (a burst of changes is one reload)',
    default: () => 300,
    check: (value, ctx) => duration(value, ctx, '"300ms"')
  },
  log_dir: {
    doc: 'directory for <name>.log (NDJSON: output and lifecycle records), written and rotated by the supervisor; relative to the config file',
    default: () => null,
    check: (value, ctx) => value === null || value === false ? null : path.resolve(ctx.baseDir, expectString(value, ctx, '"./logs"'))
  },
  log_max_size: {
    doc: 'rotate <name>.log when it reaches this size ("10M"; 0: never by size)',
    default: () => 10 * 1024 * 1024,
    check (value, ctx) {
      const bytes = parseSize(value)
      if (bytes === undefined) ctx.fail(`must be a size, got ${describe(value)}`, `For example ${ctx.ex('"10M"')}.`)
      return bytes
    }
  },
  log_daily: {
    doc: 'also rotate <name>.log at the first write of each day',
    default: () => false,
    check: (value, ctx) => bool(value, ctx)
  },
  log_keep: {
    doc: 'rotated files kept per app; older ones are deleted',
    default: () => 5,
    check: (value, ctx) => integer(value, ctx, 0, '5')
  },
  redirect_http: {
    doc: 'a plain http port (e.g. 80) on which requests for the app\'s https prefixes (same hosts and paths) get a 308 redirect to https; the native router only (HTTP.SYS has no such redirect)',
    default: () => null,
    check (value, ctx) {
      if (value === false || value === null) return null
      const port = integer(value, ctx, 1, '80')
      if (port > 65535) ctx.fail(`must be a port (1-65535), got ${port}`, `For example ${ctx.ex('80')}.`)
      const https = ctx.app.urls.filter((u) => u.startsWith('https://'))
      if (https.length === 0) {
        ctx.fail('needs an https prefix in urls to redirect to', 'Add one, for example urls: ["https://+:443/"], or remove redirect_http.')
      }
      if (https.some((u) => Number(/:(\d+)\//.exec(u)[1]) === port)) {
        ctx.fail(`is ${port}, the port of the app's https prefix`, 'Give the plain http port, for example redirect_http: 80.')
      }
      return port
    }
  },
  cache: {
    doc: 'the router\'s output cache for this app (docs/output-cache.md): [{ path: "/static/", ttl: "10s", query?: false }] stores GET responses under path for ttl; responses with Cache-Control: public, max-age or s-maxage are stored anyway; never a response with Set-Cookie, Vary, private or no-store, or to a request with Authorization; false turns the cache off for the app',
    default: () => [],
    check (value, ctx) {
      if (value === false) return false
      if (value === null || value === true) return []
      if (!Array.isArray(value)) ctx.fail(`must be an array of { path, ttl } or false, got ${describe(value)}`, 'For example cache: [{ path: "/static/", ttl: "10s" }], or cache: false.')
      return value.map((entry, i) => subObject(entry, ctx.at(i), cacheRuleSchema, { query: false }, '{ path: "/static/", ttl: "10s" }'))
    }
  },
  auth: {
    doc: 'Windows authentication by HTTP.SYS: { schemes: ["negotiate", "ntlm"] (also "kerberos", "basic", "digest"), anonymous?: true (false: 401 with the challenges, the app never sees the request), ' +
      'realm?, domain?, basic_over_http?: false, kerberos_credential_caching?: false, dev_identity?: { user, sid?, groups? } (the native router\'s stand-in, not authentication) }; the user is req.windowsIdentity',
    default: () => null,
    check: (value, ctx) => require('./auth-keys').checkAuth(value, ctx)
  },
  promote_server_vars: {
    doc: 'iisnode\'s promoteServerVars: ["AUTH_USER", "AUTH_TYPE", "LOGON_USER", "REMOTE_USER"] become x-iisnode-auth_user-style request headers; a client\'s own x-iisnode-* headers are dropped',
    default: () => [],
    check: (value, ctx) => require('./auth-keys').checkServerVars(value, ctx)
  }
}

// One output cache rule. HTTP.SYS keeps a response's time to live in whole seconds
// (HTTP_CACHE_POLICY.SecondsToLive): ttl is stored as seconds, 1 or more.
const cacheRuleSchema = {
  path: {
    check (value, ctx) {
      const p = expectString(value, ctx, '"/static/"')
      if (!p.startsWith('/') || /[?#\s]/.test(p)) ctx.fail(`must be a URL path starting with "/" (no query, no spaces), got ${describe(value)}`, 'For example path: "/static/".')
      return p
    }
  },
  ttl: {
    check (value, ctx) {
      const ms = duration(value, ctx, '"10s"', 1)
      if (ms < 1000) ctx.fail(`must be at least 1s (the router keeps whole seconds), got ${describe(value)}`, `For example ${ctx.ex('"10s"')}.`)
      return Math.floor(ms / 1000)
    }
  },
  query: { check: (value, ctx) => bool(value, ctx) }
}
Object.defineProperty(cacheRuleSchema, 'after', {
  value (out, ctx) {
    if (out.path === undefined) ctx.at('path').fail('is required', 'For example { path: "/static/", ttl: "10s" }.')
    if (out.ttl === undefined) ctx.at('ttl').fail('is required', 'For example { path: "/static/", ttl: "10s" }.')
  }
})

const RESTART_MODES = ['always', 'on-failure', 'never']
const APP_TYPES = ['web', 'worker']
const BACKENDS = ['auto', 'httpsys', 'hub']

// Top-level keys besides `apps`: settings of the whole run. A CLI flag (--backend) wins
// over the file.
const topSchema = {
  backend: {
    doc: 'the router: "auto" (HTTP.SYS on Windows when its addon loads and every app has urls, else the native router), "httpsys" (HTTP.SYS) or "hub" (the native router)',
    default: () => 'auto',
    check: (value, ctx) => oneOf(value, ctx, BACKENDS)
  },
  limits: {
    doc: 'the router\'s limits, the same on the native router and on HTTP.SYS: queue_length, max_body_size, header_timeout, idle_timeout, body_timeout, queue_timeout, max_connections, cache_size, cache_max_response',
    default: () => ({ ...LIMIT_DEFAULTS }),
    check: (value, ctx) => subObject(value, ctx, limitsSchema, LIMIT_DEFAULTS, '{ queue_length: 1000, max_body_size: "100M" }')
  },
  tls: {
    doc: 'certificates for https prefixes: [{ port, host?, ip?, thumbprint? | pfx + passphrase? | cert + key, ca?, requestCert?, rejectUnauthorized?, store? }] (paths or PEM text); the native router serves them (and reloads a changed file), on Windows `httpsys start --setup` binds them',
    default: () => [],
    check (value, ctx) {
      if (!Array.isArray(value)) ctx.fail(`must be an array, got ${describe(value)}`, 'For example tls: [{ port: 443, pfx: "./site.pfx" }].')
      return value.map((entry, i) => subObject(entry, ctx.at(i), tlsSchema, {}, '{ port: 443, pfx: "./site.pfx" }'))
    }
  },
  metrics: {
    doc: 'a Prometheus endpoint of the supervisor: { listen: "127.0.0.1:9464" } serves /metrics (requests by status class, latency, queue depth, restarts, CPU, memory) and /healthz readiness; off when absent',
    default: () => null,
    check (value, ctx) {
      if (value === false || value === null) return null
      return subObject(value, ctx, metricsSchema, { listen: null }, '{ listen: "127.0.0.1:9464" }')
    }
  }
}

const metricsSchema = {
  listen: {
    doc: '"host:port", ":port" or a port number; the host defaults to 127.0.0.1 (the numbers name your apps and URLs: expose them on purpose)',
    check (value, ctx) {
      const m = typeof value === 'number' ? [null, '', String(value)] : typeof value === 'string' ? /^(?:\[?([^\]]*?)\]?:)?(\d+)$/.exec(value.trim()) : null
      const port = m ? Number(m[2]) : NaN
      if (!m || !Number.isInteger(port) || port < 1 || port > 65535) {
        ctx.fail(`must be "host:port", ":port" or a port number from 1 to 65535, got ${describe(value)}`, `For example ${ctx.ex('"127.0.0.1:9464"')}.`)
      }
      return { host: m[1] || '127.0.0.1', port }
    }
  }
}
Object.defineProperty(metricsSchema, 'after', {
  value (out, ctx) {
    if (out.listen === null) ctx.at('listen').fail('is required', 'For example metrics: { listen: "127.0.0.1:9464" }.')
  }
})

// HTTP.SYS keeps its timers in whole seconds in a USHORT (HTTP_TIMEOUT_LIMIT_INFO), where
// 0 means "the default" and 65535 (MAXUSHORT) turns the timer off ("Configuring the
// Application Specific Timeouts"): the longest length is 65534 s, and the same range
// holds on the native router, so one config means the same on both routers.
// https://learn.microsoft.com/windows/win32/api/http/ns-http-http_timeout_limit_info
const MAX_TIMER_S = 65534
const LIMIT_DEFAULTS = Object.freeze({
  cache_size: 64 * 1024 * 1024,
  cache_max_response: 256 * 1024,
  queue_length: 1000,
  max_body_size: 100 * 1024 * 1024,
  header_timeout: 60000,
  idle_timeout: 5000,
  body_timeout: 120000,
  queue_timeout: 120000,
  max_connections: 0
})

const limitsSchema = {
  // the output cache's memory for every app together (0: no cache), and the largest
  // response it stores (HTTP.SYS: UriMaxUriBytes, 256 KB, a machine-wide setting there)
  cache_size: { check: (value, ctx) => size(value, ctx, '"64M"') },
  cache_max_response: { check: (value, ctx) => size(value, ctx, '"256K"') },
  queue_length: {
    // HttpServerQueueLengthProperty: a ULONG HTTP.SYS caps at 65535
    check (value, ctx) {
      const n = integer(value, ctx, 1, '1000')
      if (n > 65535) ctx.fail(`must be at most 65535 (HTTP.SYS's limit), got ${n}`, `For example ${ctx.ex('1000')}.`)
      return n
    }
  },
  max_body_size: {
    check (value, ctx) {
      const bytes = parseSize(value)
      if (bytes === undefined) ctx.fail(`must be a size, got ${describe(value)}`, `For example ${ctx.ex('"100M"')} (0: no limit).`)
      return bytes
    }
  },
  header_timeout: { check: (value, ctx) => timer(value, ctx, '"60s"') },
  idle_timeout: { check: (value, ctx) => timer(value, ctx, '"5s"') },
  body_timeout: { check: (value, ctx) => timer(value, ctx, '"2m"') },
  queue_timeout: { check: (value, ctx) => timer(value, ctx, '"2m"') },
  max_connections: {
    // HttpServerConnectionsProperty: a ULONG HTTP.SYS takes up to 4294967294 (0: no limit)
    check (value, ctx) {
      const n = integer(value, ctx, 0, '10000')
      if (n > 4294967294) ctx.fail(`must be at most 4294967294 (HTTP.SYS's limit; 0 means no limit), got ${n}`, `For example ${ctx.ex('10000')}.`)
      return n
    }
  }
}

// A certificate, key or CA is a path (relative to the config file) or PEM text (a
// string holding "-----BEGIN ...-----", e.g. read from a secret store by the config).
const PEM = /-----BEGIN [A-Z0-9 ]+-----/
function pemOrPath (value, ctx, example) {
  const text = expectString(value, ctx, example)
  return PEM.test(text) ? text : path.resolve(ctx.baseDir, text)
}

const tlsSchema = {
  port: {
    check (value, ctx) {
      const n = integer(value, ctx, 1, '443')
      if (n > 65535) ctx.fail(`must be a port (1-65535), got ${n}`, `For example ${ctx.ex('443')}.`)
      return n
    }
  },
  host: { check: (value, ctx) => expectString(value, ctx, '"example.com"').toLowerCase() },
  ip: { check: (value, ctx) => expectString(value, ctx, '"0.0.0.0"') },
  thumbprint: { check: (value, ctx) => expectString(value, ctx, '"0123...cdef"') },
  pfx: { check: (value, ctx) => path.resolve(ctx.baseDir, expectString(value, ctx, '"./site.pfx"')) },
  passphrase: { check: (value, ctx) => typeof value === 'string' ? value : expectString(value, ctx, '"secret"') },
  cert: { check: (value, ctx) => pemOrPath(value, ctx, '"./site.crt"') },
  key: { check: (value, ctx) => pemOrPath(value, ctx, '"./site.key"') },
  ca: {
    check (value, ctx) {
      if (Array.isArray(value)) return value.map((v, i) => pemOrPath(v, ctx.at(i), '"./clients-ca.crt"'))
      return pemOrPath(value, ctx, '"./clients-ca.crt"')
    }
  },
  requestCert: { check: (value, ctx) => bool(value, ctx) },
  rejectUnauthorized: { check: (value, ctx) => bool(value, ctx) },
  store: { check: (value, ctx) => expectString(value, ctx, '"My"') }
}
Object.defineProperty(tlsSchema, 'after', {
  enumerable: false,
  value (out, ctx) {
    if (out.port === undefined) ctx.at('port').fail('is required', 'Add port: 443.')
    if (out.host !== undefined && out.ip !== undefined) ctx.at('ip').fail('cannot go with host', 'A certificate is bound by IP:port or by host name (SNI): keep one.')
    const sources = ['thumbprint', 'pfx', 'cert'].filter((k) => out[k] !== undefined)
    if (sources.length !== 1) {
      ctx.fail(`needs exactly one certificate source, got ${sources.length ? sources.join(' and ') : 'none'}`, 'Give thumbprint (a certificate in the store), or pfx (with passphrase), or cert with key.')
    }
    if ((out.cert === undefined) !== (out.key === undefined)) ctx.at(out.cert === undefined ? 'cert' : 'key').fail('is required with ' + (out.cert === undefined ? 'key' : 'cert'), 'cert and key go together (PEM files or PEM text).')
    if (out.rejectUnauthorized !== undefined && out.requestCert !== true) {
      ctx.at('rejectUnauthorized').fail('has no effect without requestCert: true', 'Add requestCert: true (ask clients for a certificate), or remove rejectUnauthorized.')
    }
  }
})

function timer (value, ctx, example) {
  const ms = duration(value, ctx, example, 1)
  if (ms < 1000 || ms > MAX_TIMER_S * 1000) {
    ctx.fail(`must be between 1s and ${MAX_TIMER_S}s (HTTP.SYS keeps it in whole seconds in 16 bits, and 65535 would turn it off), got ${describe(value)}`,
      `For example ${ctx.ex(example)}.`)
  }
  return Math.ceil(ms / 1000) * 1000
}
const BACKOFF_DEFAULTS = Object.freeze({ initial: 200, max: 30000, factor: 2, jitter: 0.2, reset_after: 60000 })

const backoffSchema = {
  initial: { check: (value, ctx) => duration(value, ctx, '"200ms"', 1) },
  max: { check: (value, ctx) => duration(value, ctx, '"30s"', 1) },
  factor: {
    check (value, ctx) {
      if (typeof value !== 'number' || !(value >= 1) || !Number.isFinite(value)) ctx.fail(`must be a number >= 1, got ${describe(value)}`, `For example ${ctx.ex('2')}.`)
      return value
    }
  },
  jitter: {
    check (value, ctx) {
      if (typeof value !== 'number' || !(value >= 0 && value <= 1)) ctx.fail(`must be a fraction between 0 and 1, got ${describe(value)}`, `For example ${ctx.ex('0.2')} (up to 20 % shorter).`)
      return value
    }
  },
  reset_after: { check: (value, ctx) => duration(value, ctx, '"60s"') }
}
Object.defineProperty(backoffSchema, 'after', {
  enumerable: false,
  value (out, ctx) {
    if (out.max < out.initial) ctx.at('max').fail(`is below initial (${out.initial} ms)`, 'The cap must be at least the first delay.')
  }
})

/**
 * restart_window once every key is known: 'auto' derived, an explicit one checked. A
 * window shorter than max_restarts restarts can take (the backoff alone) never sees a
 * crash loop: the instance would restart for ever, which is what the limit is for.
 * An unstable exit comes at most ready_timeout + kill_timeout + min_uptime after its
 * spawn, then the backoff (at most backoff.max): so an 'auto' window holds max_restarts
 * of them however slowly the app fails. With ready_timeout 0 there is no such bound:
 * no window, every unstable exit since the last stable run counts.
 * @returns {number} ms; 0 for no window
 */
function restartWindow (app, ctx) {
  const { max_restarts: max, backoff } = app
  if (app.restart_window === 'auto') {
    if (max === 0 || app.ready_timeout === 0) return 0
    return Math.min(MAX_DURATION_MS, max * (backoff.max + app.ready_timeout + app.kill_timeout + app.min_uptime))
  }
  if (max < 2 || app.restart_window === 0) return app.restart_window
  let span = 0 // the fastest max_restarts exits can come: at once, after the shortest delays
  for (let attempt = 0; attempt < max - 1; attempt++) span += backoffDelay(backoff, attempt, () => 1)
  if (app.restart_window <= span) {
    ctx.fail(`is ${app.restart_window} ms, but max_restarts (${max}) exits with this backoff take at least ${span} ms, so the crash loop limit can never be reached`,
      'Use restart_window: "auto" (the default), or a longer window, a lower max_restarts or a smaller backoff.max.')
  }
  return app.restart_window
}

function subObject (value, ctx, rows, defaults, example) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    ctx.fail(`must be an object, got ${describe(value)}`, `For example ${ctx.ex(example)}.`)
  }
  const known = Object.keys(rows)
  const { didYouMean } = require('./suggest')
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue
    const guess = didYouMean(key, known)
    ctx.at(key).fail('is not a known key', (guess ? `Did you mean ${JSON.stringify(guess)}? ` : '') + `Known keys: ${known.join(', ')}.`)
  }
  const out = { ...defaults }
  for (const key of known) if (value[key] !== undefined) out[key] = rows[key].check(value[key], ctx.at(key))
  if (rows.after) rows.after(out, ctx)
  return out
}

/**
 * @param {string} [zero] what 0 means for this key ("for ever"), for the fix of a too long one
 */
function duration (value, ctx, example, min = 0, zero) {
  const ms = parseDuration(value)
  if (ms === undefined || ms < min) {
    ctx.fail(`must be a duration${min > 0 ? ' above 0' : ''}, got ${describe(value)}`, `For example ${ctx.ex(example)} (a number is milliseconds).`)
  }
  if (ms > MAX_DURATION_MS) {
    ctx.fail(`must be at most ${MAX_DURATION_TEXT} (${MAX_DURATION_MS} ms), got ${describe(value)}`,
      `Use a shorter one, for example ${ctx.ex(example)}${zero ? `; 0 means ${zero}` : ''}.`)
  }
  return ms
}

function size (value, ctx, example) {
  const bytes = parseSize(value)
  if (bytes === undefined) ctx.fail(`must be a size, got ${describe(value)}`, `For example ${ctx.ex(example)}.`)
  return bytes
}

function integer (value, ctx, min, example) {
  if (typeof value === 'string' && /^\d+$/.test(value)) value = Number(value)
  if (!Number.isSafeInteger(value) || value < min) ctx.fail(`must be an integer >= ${min}, got ${describe(value)}`, `For example ${ctx.ex(example)}.`)
  return value
}

function bool (value, ctx) {
  if (typeof value !== 'boolean') ctx.fail(`must be true or false, got ${describe(value)}`, `For example ${ctx.ex('true')}.`)
  return value
}

function oneOf (value, ctx, choices) {
  if (!choices.includes(value)) {
    ctx.fail(`must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${describe(value)}`, `For example ${ctx.ex(JSON.stringify(choices[0]))}.`)
  }
  return value
}

// Other tools' spellings, so their users get pointed at ours. pm2's own keys are not
// here: an ecosystem file's keys are mapped, or ignored with a warning (pm2-keys.js).
const appAliases = {
  prefix: 'urls',
  prefixes: 'urls',
  url: 'urls',
  exec: 'script',
  file: 'script',
  main: 'script',
  argv: 'args',
  nodeArgs: 'node_args',
  execArgv: 'node_args',
  workers: 'instances',
  killTimeout: 'kill_timeout',
  restart_policy: 'restart',
  ignore: 'ignore_watch',
  delay: 'watch_delay',
  max_memory: 'max_memory_restart',
  logs: 'log_dir',
  max_size: 'log_max_size',
  retain: 'log_keep'
}

function scriptExists (file) {
  try {
    // node runs `node dir` and `node app` (no extension) as require() resolves them
    return fs.existsSync(file) || Boolean(require.resolve(file))
  } catch {
    return false
  }
}

// `httpsys stop all` (reload, restart) means every app: no app can be called that
function notReserved (name, ctx) {
  if (name === RESERVED_NAME) {
    ctx.fail(`${JSON.stringify(name)} is reserved: \`httpsys stop all\` and the other commands mean every app by it`,
      `Give the app another name, for example ${ctx.ex('"all-api"')}.`)
  }
  return name
}

/** An app name from a script path: its file name without extension, made valid. */
function nameOf (script) {
  const stem = path.basename(script, path.extname(script))
  return stem.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 64) || 'app'
}

module.exports = { restartWindow, appSchema, appAliases, topSchema, parseInstances, cpuCount, describe, RESTART_MODES, BACKENDS, BACKOFF_DEFAULTS, LIMIT_DEFAULTS, MAX_INSTANCES }
