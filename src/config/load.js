'use strict'

// Loading a config file: CommonJS (.js/.cjs) exporting { apps } or a function returning
// it (sync or async), ESM (.mjs, or .js in a "type": "module" package) through import(),
// or JSON. Every failure becomes one coded error naming the file.
//
// What it exports must settle within a timeout (10 s; HTTPSYS_CONFIG_TIMEOUT): a promise
// that never does leaves node nothing to wait for, and it exits 0 without a word, so
// `httpsys start` under a service manager would be "done" and never restarted (issue 23).

const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { codes } = require('../errors')
const { parseDuration, MAX_DURATION_MS } = require('./duration')

const TIMEOUT_ENV = 'HTTPSYS_CONFIG_TIMEOUT'
const DEFAULT_TIMEOUT = '10s'

/**
 * @param {string} file path of the config file (made absolute against process.cwd())
 * @param {object} [options]
 * @param {string} [options.env] the `--env` name, passed to a config that is a function ({ env })
 * @param {string|number} [options.timeout] how long what the file exports may take to
 *   settle (default: $HTTPSYS_CONFIG_TIMEOUT, else 10s)
 * @returns {Promise<unknown>} the raw config, to be validated
 */
async function load (file, { env, timeout = process.env[TIMEOUT_ENV] || DEFAULT_TIMEOUT } = {}) {
  const abs = path.resolve(file)
  const ms = timeoutMs(timeout)
  let stat
  try { stat = fs.statSync(abs) } catch {}
  if (!stat || !stat.isFile()) throw new codes.ERR_HTTPSYS_CONFIG_NOT_FOUND({ path: abs })

  let exported
  let timer
  let what = 'its top-level await'
  // the timer also keeps node running while the config's promise is all there is
  const expired = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new codes.ERR_HTTPSYS_CONFIG_TIMEOUT({ path: abs, timeout: String(timeout), what })), ms)
  })
  try {
    // in a box: an async function returning the exported promise would wait for it here
    exported = (await Promise.race([importFile(abs), expired])).value
    if (isThenable(exported)) {
      what = 'the promise it exports'
      exported = await Promise.race([exported, expired])
    }
    if (typeof exported === 'function') {
      what = 'the promise its exported function returned'
      exported = await Promise.race([exported({ env }), expired])
    }
  } catch (err) {
    if (err && err.code === 'ERR_HTTPSYS_CONFIG_TIMEOUT') throw err
    throw new codes.ERR_HTTPSYS_CONFIG_LOAD({ path: abs, cause: err })
  } finally {
    clearTimeout(timer)
  }
  return exported
}

function isThenable (value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function'
}

function timeoutMs (value) {
  const ms = parseDuration(value)
  if (ms === undefined || ms < 1 || ms > MAX_DURATION_MS) {
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
      key: TIMEOUT_ENV,
      reason: `must be a duration such as "30s", got ${JSON.stringify(String(value))}`,
      fix: `Set it to how long the config file may take to load, e.g. ${TIMEOUT_ENV}=30s, or unset it for ${DEFAULT_TIMEOUT}.`
    })
  }
  return ms
}

/** @returns {Promise<{ value: unknown }>} what the file exports */
async function importFile (abs) {
  const ext = path.extname(abs).toLowerCase()
  if (ext === '.json') return { value: JSON.parse(fs.readFileSync(abs, 'utf8')) }
  if (ext === '.mjs') return importEsm(abs)
  // a fresh read every time: `httpsys config check` after an edit must see the edit
  delete require.cache[abs]
  try {
    const value = require(abs)
    // require() of an ES module (node 22) keeps it in the ESM loader, which require.cache
    // does not reach: import() it afresh, or `httpsys reload` would never see an edit
    if (value !== null && typeof value === 'object' && value[Symbol.toStringTag] === 'Module') return importEsm(abs)
    return { value: esmDefault(value) }
  } catch (err) {
    if (err.code === 'ERR_REQUIRE_ESM') return importEsm(abs)
    throw err
  }
}

// import() keeps a module by its URL for the life of the process: each load after the
// first asks for another URL (the file read again; what it imports stays as loaded)
let esmLoads = 0

async function importEsm (abs) {
  const href = pathToFileURL(abs).href
  return { value: esmDefault(await import(esmLoads++ === 0 ? href : `${href}?load=${esmLoads}`)) }
}

// An ES module's namespace, from import() or from require() (node 20.19+ and 22 load ESM
// through require): the config is its default export when it has one.
function esmDefault (exported) {
  const isNamespace = exported !== null && typeof exported === 'object' &&
    (exported[Symbol.toStringTag] === 'Module' || exported.__esModule === true)
  return isNamespace && exported.default !== undefined ? exported.default : exported
}

module.exports = { load }
