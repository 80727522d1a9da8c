'use strict'

// Builds a command of the Go router (router/cmd/<name>) for a test, into a temp
// directory of its own: Go binaries are never committed nor written into the checkout.
// README "Development" says which Go `npm test` needs.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROUTER = path.join(__dirname, '..', '..', 'router')

/**
 * @param {string} name a folder of router/cmd
 * @returns {{ bin: string, cleanup: () => void }}
 */
function buildGo (name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-go-'))
  const bin = path.join(dir, process.platform === 'win32' ? `${name}.exe` : name)
  try {
    execFileSync('go', ['build', '-o', bin, `./cmd/${name}`], {
      cwd: ROUTER,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300000,
      env: { ...process.env, CGO_ENABLED: '0' }
    })
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true })
    if (err.code === 'ENOENT') throw new Error('`go` is not on PATH: the router (router/) is Go, see README "Development"')
    throw new Error(`go build ./cmd/${name} failed:\n${err.stderr || err.message}`)
  }
  return { bin, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

module.exports = { buildGo }
