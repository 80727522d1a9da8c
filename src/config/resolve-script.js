'use strict'

// The supervisor always runs `process.execPath ... script` with no shell in between
// (docs/supervisor.md 3.5: spawning a .cmd fails with EINVAL since node 20.12.2,
// and a shell between us and the app breaks signals and tree kill). So when a user
// points `script` at what npm put in node_modules/.bin (a symlink on POSIX; a .cmd,
// .ps1 and sh shim trio on Windows), we find the JavaScript file the shim runs.

const fs = require('node:fs')
const path = require('node:path')

// cmd-shim writes these; the last quoted path is the program, the others are node.exe
const CMD_TARGET = /"%~?dp0%?\\([^"]+)"/g
const SH_TARGET = /"\$basedir\/([^"]+)"/g
const NODE_EXE = /^node(\.exe|\$exe)?$/i
const JS_EXT = new Set(['.js', '.cjs', '.mjs', '.json', '.node'])

/**
 * @param {string} file absolute path of what the user configured
 * @returns {{ file: string, from?: string } | { error: string }} the JS entry (from: the
 *   shim it was found through), or why this cannot be run by node
 */
function resolveScript (file) {
  let real = file
  // a POSIX .bin entry is a symlink to the package's bin file: run the file itself
  try { real = fs.realpathSync(file) } catch {}
  const ext = path.extname(real).toLowerCase()
  let text
  try {
    if (ext === '.cmd' || ext === '.bat' || ext === '.ps1' || looksLikeShellShim(real)) {
      text = fs.readFileSync(real, 'utf8')
    }
  } catch {}
  if (text === undefined) return real === file ? { file } : { file: real, from: file }
  const pattern = ext === '.cmd' || ext === '.bat' ? CMD_TARGET : SH_TARGET
  const target = lastTarget(text, pattern)
  if (target === undefined) {
    const what = ext === '.cmd' || ext === '.bat' ? 'a batch file' : ext === '.ps1' ? 'a PowerShell script' : 'a shell script'
    return { error: `is ${what}, not a JavaScript file node can run, and no JavaScript entry was found in it` }
  }
  const resolved = path.resolve(path.dirname(real), target.replace(/\\/g, path.sep).replace(/\//g, path.sep))
  if (!fs.existsSync(resolved)) {
    return { error: `is an npm shim for ${resolved}, which does not exist (reinstall the package: npm install)` }
  }
  return { file: resolved, from: file }
}

function lastTarget (text, pattern) {
  let found
  for (const m of text.matchAll(pattern)) {
    if (!NODE_EXE.test(path.basename(m[1].replace(/\\/g, '/')))) found = m[1]
  }
  return found
}

/** A file starting with a shell's shebang (npm's sh shim on Windows, a start.sh). */
function looksLikeShellShim (file) {
  if (JS_EXT.has(path.extname(file).toLowerCase())) return false
  let fd
  try {
    fd = fs.openSync(file, 'r')
    const buf = Buffer.alloc(64)
    const n = fs.readSync(fd, buf, 0, 64, 0)
    const first = buf.subarray(0, n).toString('latin1').split('\n')[0]
    return first.startsWith('#!') && /\b(sh|bash|dash|zsh)\b/.test(first) && !/\bnode\b/.test(first)
  } catch {
    return false
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

module.exports = { resolveScript }
