'use strict'

// Shared by the service tests: a project folder with a config file, and the deps of
// src/service for a pretend machine (no systemctl, no SCM: files under a temp root and
// the fake addon).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createProgram, report } = require('../../../src/cli')

/** A temp folder with httpsys.config.js (apps: name -> { kill_timeout, urls }) and the scripts. */
function project (apps = { web: {} }, { folder = 'shop', backend } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-service-'))
  const dir = path.join(root, folder)
  fs.mkdirSync(dir, { recursive: true })
  const list = Object.entries(apps).map(([name, extra]) => ({ name, script: `./${name}.js`, ...extra }))
  for (const app of list) fs.writeFileSync(path.join(dir, `${app.name}.js`), '')
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = ${JSON.stringify({ ...(backend ? { backend } : {}), apps: list })}\n`)
  return { root, dir, config: path.join(dir, 'httpsys.config.js'), cleanup: () => fs.rmSync(root, { recursive: true, force: true }) }
}

/** Runs `httpsys ...args` in-process; resolves with { code, out, err }. */
async function cli (deps, ...args) {
  let out = ''
  const errors = []
  const spyErr = jest.spyOn(console, 'error').mockImplementation((m) => errors.push(m))
  const spyWrite = jest.spyOn(process.stderr, 'write').mockImplementation((m) => { errors.push(String(m)); return true })
  let code = 0
  process.exitCode = undefined
  try {
    await createProgram({ ...deps, out: (t) => { out += t } }).parseAsync(['node', 'httpsys', ...args])
    code = process.exitCode || 0
  } catch (err) {
    code = report(err)
  } finally {
    spyErr.mockRestore()
    spyWrite.mockRestore()
    process.exitCode = undefined
  }
  return { code, out, err: errors.join('\n') }
}

module.exports = { project, cli }
