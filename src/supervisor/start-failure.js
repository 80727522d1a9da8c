'use strict'

// Why an app that never got ready failed, in one line, from the last lines it wrote to
// stderr: what a user needs instead of the same stack trace ten times over a minute.
// The cases first-time users meet most: a dependency not installed, a file missing, a
// syntax error, a port someone else holds (another httpsys supervisor: put the apps in
// one config).

const path = require('node:path')

/**
 * @param {string[]} lines the process's last stderr lines, oldest first
 * @param {object} context
 * @param {string} context.cwd the app's directory
 * @param {number|null} context.code
 * @param {string|null} context.signal
 * @returns {string}
 */
function startFailureCause (lines, { cwd, code, signal }) {
  const text = lines.join('\n')
  let m = /Cannot find (?:module|package) '([^']+)'/.exec(text)
  if (m) {
    const name = m[1]
    if (name.startsWith('.') || path.isAbsolute(name) || /^[A-Za-z]:[\\/]/.test(name)) return `Cannot find module '${name}': the file is missing`
    return `Cannot find module '${name}': run \`npm install\` in ${cwd}`
  }
  m = /already in use by pid (\d+) \(([^)]*)\)/.exec(text)
  if (m) {
    const owner = `pid ${m[1]} (${m[2]})`
    return /httpsys/.test(m[2])
      ? `its port is held by another httpsys supervisor, ${owner}: put both apps in one config, or use another port`
      : `its port is held by ${owner}: stop that program or use another port`
  }
  m = /EADDRINUSE\b[^\n]*?(\d{2,5})\b/.exec(text)
  if (m) return `port ${m[1]} is already in use: stop what holds it (\`ss -ltnp 'sport = :${m[1]}'\`) or use another port`
  m = /^SyntaxError: (.*)$/m.exec(text)
  if (m) {
    // node prints the file:line the error is in a few lines above it
    const where = lines.find((l) => /^\S.*:\d+$/.test(l))
    return `SyntaxError: ${m[1]}${where ? ` (${where})` : ''}`
  }
  const error = lines.find((l) => /^(\w+Error|Error)( \[\w+\])?: /.test(l))
  if (error) return error.trim()
  const last = lines.filter((l) => l.trim() !== '').pop()
  if (last) return last.trim().slice(0, 300)
  return signal ? `killed by ${signal}` : `exited with code ${code}`
}

module.exports = { startFailureCause }
