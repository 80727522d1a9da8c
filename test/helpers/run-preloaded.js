'use strict'

// Runs a small app given as code, with the preload (standalone: the process's own router)
// or on node's own stack, so a test can compare what it prints with what node does.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const { REGISTER, standaloneEnv } = require('./standalone')

/**
 * @param {string} code
 * @param {object} [opts]
 * @param {number} [opts.timeoutMs=10000] killed after it
 * @param {boolean} [opts.preload=true] false: node's own http server
 * @param {string[]} [opts.flags=[]] node options before the code
 * @param {string} [opts.cwd]
 * @param {object} [opts.env] HTTPSYS_* variables for the run (the others are cleared;
 *   one given as undefined is unset)
 * @param {string} [opts.file] the code is written there and run as a script (a
 *   cluster.fork() runs its script again, which `-e` code has not)
 * @returns {Promise<{code: number|null, signal: string|null, out: string, err: string, ms: number, lines: object[]}>}
 *   `lines`: each line of out as JSON
 */
function runPreloaded (code, { timeoutMs = 10000, preload = true, flags = [], cwd, env, file } = {}) {
  return new Promise((resolve) => {
    if (file !== undefined) fs.writeFileSync(file, code)
    const args = [...flags, ...(preload ? ['--require', REGISTER] : []), ...(file !== undefined ? [file] : ['-e', code])]
    const e = standaloneEnv(env)
    for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k]
    const started = Date.now()
    const child = spawn(process.execPath, args, { env: e, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer)
      resolve({ code: exitCode, signal, out, err, ms: Date.now() - started, get lines () { return lines(out) } })
    })
  })
}

/** Each line of out as JSON. */
const lines = (out) => out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))

/**
 * The same script on node's own stack and through the preload: each run's stdout lines,
 * and the preloaded run's stderr and exit code.
 * @param {string} code
 * @param {object} [options] runPreloaded's (cwd, flags)
 */
async function both (code, options = {}) {
  const node = await runPreloaded(code, { ...options, preload: false })
  const ours = await runPreloaded(code, options)
  return { node: lines(node.out), ours: lines(ours.out), err: ours.err, code: ours.code }
}

module.exports = { runPreloaded, lines, both }
