'use strict'

// `--env-file <file>`: KEY=value lines (the dotenv format node's own --env-file reads),
// parsed with node's parser so quoting and comments behave exactly as there.

const fs = require('node:fs')
const path = require('node:path')
const util = require('node:util')
const { codes } = require('../errors')

/**
 * @param {string} file relative to cwd
 * @param {string} [cwd=process.cwd()]
 * @returns {Record<string, string>}
 */
function readEnvFile (file, cwd = process.cwd()) {
  const abs = path.resolve(cwd, file)
  let text
  try {
    text = fs.readFileSync(abs, 'utf8')
  } catch (err) {
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
      key: '--env-file',
      reason: `cannot read ${abs} (${err.code || err.message})`,
      fix: 'Check the path (it is relative to the current directory).'
    })
  }
  return util.parseEnv(text)
}

module.exports = { readEnvFile }
