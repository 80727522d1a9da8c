'use strict'

// `httpsys init`: writes the commented template (templates/httpsys.config.js) where
// the user asks, never over an existing file unless told to.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')

const TEMPLATE = path.join(__dirname, '..', '..', 'templates', 'httpsys.config.js')

/**
 * @param {string} file where to write (made absolute against process.cwd())
 * @param {object} [options]
 * @param {boolean} [options.force=false] replace an existing file
 * @returns {string} the absolute path written
 */
function writeInitialConfig (file, { force = false } = {}) {
  const abs = path.resolve(file)
  try {
    fs.writeFileSync(abs, fs.readFileSync(TEMPLATE), { flag: force ? 'w' : 'wx' })
  } catch (err) {
    if (err.code === 'EEXIST') {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: path.basename(abs),
        reason: `${abs} exists already`,
        fix: 'Edit it, or run `httpsys init --force` to replace it with the template.'
      })
    }
    throw err
  }
  return abs
}

module.exports = { writeInitialConfig, TEMPLATE }
