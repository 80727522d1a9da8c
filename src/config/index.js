'use strict'

// Config: load a file, validate what it exports, or build the same config from
// `httpsys start <script>` flags. What comes out is frozen and trusted downstream.

const path = require('node:path')
const { load } = require('./load')
const { validate, isValidated } = require('./validate')
const { fromFlags } = require('./from-flags')
const { parseDuration } = require('./duration')
const { parseInstances } = require('./schema')
const { parseSize, formatSize } = require('./size')
const { readEnvFile } = require('./env-file')

const DEFAULT_FILE = 'httpsys.config.js'

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
  const file = path.resolve(cwd, request.config || DEFAULT_FILE)
  const raw = await load(file, { env: request.env })
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
  DEFAULT_FILE
}
