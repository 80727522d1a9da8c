'use strict'

// Config: load a file, validate what it exports, or build the same config from
// `httpsys start <script>` flags. What comes out is frozen and trusted downstream.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')
const { load } = require('./load')
const { validate, isValidated } = require('./validate')
const { fromFlags } = require('./from-flags')
const { parseDuration } = require('./duration')
const { parseInstances } = require('./schema')
const { parseSize, formatSize } = require('./size')
const { readEnvFile } = require('./env-file')

const DEFAULT_FILE = 'httpsys.config.js'
// the names a folder's config may have, in this order: .cjs and .mjs for ESM projects
// ("type": "module", where a .js file is ESM), .json for generated ones
const CONFIG_NAMES = ['httpsys.config.js', 'httpsys.config.cjs', 'httpsys.config.mjs', 'httpsys.config.json']

/** The config files of a folder, in CONFIG_NAMES order. */
function configFilesIn (dir) {
  return CONFIG_NAMES.map((name) => path.join(dir, name)).filter((file) => {
    try { return fs.statSync(file).isFile() } catch { return false }
  })
}

/**
 * This folder's config file: httpsys.config.{js,cjs,mjs,json}, or null. Two of them is
 * an error (which one runs would be a guess).
 */
function findConfigFile (dir = process.cwd()) {
  const found = configFilesIn(dir)
  if (found.length > 1) {
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
      key: '(file)',
      reason: `${dir} has ${found.length} config files (${found.map((f) => path.basename(f)).join(', ')})`,
      fix: 'Keep one, or choose with -c <file>.'
    })
  }
  return found.length === 1 ? found[0] : null
}

/**
 * The config `httpsys start` runs: from a config file when `config` is given or no
 * script is, else one app from the flags.
 * @param {object} request what the CLI parsed (see src/cli/start.js)
 * @param {object} [options]
 * @param {string} [options.cwd=process.cwd()]
 */
async function resolveStartConfig (request, { cwd = process.cwd() } = {}) {
  const envFile = request.envFile ? readEnvFile(request.envFile, cwd) : undefined
  if (request.script && !request.config) return fromFlags(request, { baseDir: cwd, envFile })
  const file = path.resolve(cwd, request.config || findConfigFile(cwd) || DEFAULT_FILE)
  const loaded = await load(file, { env: request.env })
  // --metrics wins over the file's metrics
  const isObject = loaded !== null && typeof loaded === 'object' && !Array.isArray(loaded)
  let raw = request.metrics !== undefined && isObject ? { ...loaded, metrics: { listen: request.metrics } } : loaded
  // --node runs every app of the file on that node
  if (request.node !== undefined && isObject && Array.isArray(raw.apps)) {
    raw = { ...raw, apps: raw.apps.map((app) => app !== null && typeof app === 'object' ? { ...app, node: request.node } : app) }
  }
  return validate(raw, {
    baseDir: path.dirname(file),
    envName: request.env,
    envFile,
    backend: request.backend,
    watch: request.watch === true,
    source: { configFile: file }
  })
}

module.exports = {
  load,
  validate,
  isValidated,
  fromFlags,
  resolveStartConfig,
  parseDuration,
  parseSize,
  formatSize,
  parseInstances,
  readEnvFile,
  findConfigFile,
  configFilesIn,
  CONFIG_NAMES,
  DEFAULT_FILE
}
