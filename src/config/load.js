'use strict'

// Loading a config file: CommonJS (.js/.cjs) exporting { apps } or a function returning
// it (sync or async), ESM (.mjs, or .js in a "type": "module" package) through import(),
// or JSON. Every failure becomes one coded error naming the file.

const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')
const { codes } = require('../errors')

/**
 * @param {string} file path of the config file (made absolute against process.cwd())
 * @param {object} [options]
 * @param {string} [options.env] the `--env` name, passed to a config that is a function ({ env })
 * @returns {Promise<unknown>} the raw config, to be validated
 */
async function load (file, { env } = {}) {
  const abs = path.resolve(file)
  let stat
  try { stat = fs.statSync(abs) } catch {}
  if (!stat || !stat.isFile()) throw new codes.ERR_HTTPSYS_CONFIG_NOT_FOUND({ path: abs })

  let exported
  try {
    exported = await importFile(abs)
    if (typeof exported === 'function') exported = await exported({ env })
  } catch (err) {
    throw new codes.ERR_HTTPSYS_CONFIG_LOAD({ path: abs, cause: err })
  }
  return exported
}

async function importFile (abs) {
  const ext = path.extname(abs).toLowerCase()
  if (ext === '.json') return JSON.parse(fs.readFileSync(abs, 'utf8'))
  if (ext === '.mjs') return importEsm(abs)
  // a fresh read every time: `httpsys config check` after an edit must see the edit
  delete require.cache[abs]
  try {
    return esmDefault(require(abs))
  } catch (err) {
    if (err.code === 'ERR_REQUIRE_ESM') return importEsm(abs)
    throw err
  }
}

async function importEsm (abs) {
  return esmDefault(await import(pathToFileURL(abs).href))
}

// An ES module's namespace, from import() or from require() (node 20.19+ and 22 load ESM
// through require): the config is its default export when it has one.
function esmDefault (exported) {
  const isNamespace = exported !== null && typeof exported === 'object' &&
    (exported[Symbol.toStringTag] === 'Module' || exported.__esModule === true)
  return isNamespace && exported.default !== undefined ? exported.default : exported
}

module.exports = { load }
