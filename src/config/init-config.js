'use strict'

// `httpsys init`: writes the commented template (templates/httpsys.config.js) where
// the user asks, never over an existing file unless told to.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')

const TEMPLATE = path.join(__dirname, '..', '..', 'templates', 'httpsys.config.js')

/**
 * Where `httpsys init` writes without a file name: httpsys.config.js, or in an ESM
 * package ("type": "module", where a .js file is an ES module) httpsys.config.cjs, which
 * loads there as it is.
 */
function defaultInitFile (dir = process.cwd()) {
  return isEsmPackage(dir) ? 'httpsys.config.cjs' : 'httpsys.config.js'
}

/** Whether a .js file in dir is an ES module: the nearest package.json says "type": "module". */
function isEsmPackage (dir) {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    try {
      return JSON.parse(fs.readFileSync(path.join(d, 'package.json'), 'utf8')).type === 'module'
    } catch (err) {
      if (err.code !== 'ENOENT') return false // a broken package.json: node would say so itself
    }
    if (path.dirname(d) === d) return false
  }
}

/**
 * @param {string} file where to write (made absolute against process.cwd())
 * @param {object} [options]
 * @param {boolean} [options.force=false] replace an existing file
 * @returns {string} the absolute path written
 */
function writeInitialConfig (file, { force = false } = {}) {
  const abs = path.resolve(file)
  // the single executable has no templates/ folder: it carries the file as an asset
  const carried = require('../sea').asset('templates/httpsys.config.js')
  let text = carried !== null ? carried.toString('utf8') : fs.readFileSync(TEMPLATE, 'utf8')
  // an ES module by its name, or a .js file in an ESM package: the same template, ESM syntax
  const ext = path.extname(abs).toLowerCase()
  if (ext === '.mjs' || (ext === '.js' && isEsmPackage(path.dirname(abs)))) {
    text = text.replace(/^'use strict'\n\n/, '').replace(/^module\.exports = /m, 'export default ')
  }
  text = text.replace(/^\/\/ httpsys\.config\.js:/m, `// ${path.basename(abs)}:`)
  try {
    fs.writeFileSync(abs, text, { flag: force ? 'w' : 'wx' })
  } catch (err) {
    // a second `httpsys init` is not a broken config: the file is there, say so
    if (err.code === 'EEXIST') throw new codes.ERR_HTTPSYS_CONFIG_EXISTS({ path: abs })
    throw err
  }
  return abs
}

module.exports = { writeInitialConfig, defaultInitFile, isEsmPackage, TEMPLATE }
