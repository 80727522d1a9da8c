'use strict'

// Running test processes: one process group per run, killed whole after the run (or
// at its timeout), so a test that leaves servers or children behind costs the next
// run nothing.

const { spawn } = require('node:child_process')

const TAIL = 4000

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {{cwd?: string, env?: object, timeoutMs: number, keep?: number, termGraceMs?: number}} options
 *   keep: how many characters of stdout/stderr to keep (the tail); termGraceMs: at the
 *   timeout, send SIGTERM to the process itself first and kill the group that long after
 * @returns {Promise<{code: number|null, signal: string|null, timedOut: boolean,
 *   ms: number, stdout: string, stderr: string}>}
 */
function runProcess (cmd, args, options) {
  const keep = options.keep || TAIL
  return new Promise((resolve) => {
    const started = Date.now()
    let stdout = ''
    let stderr = ''
    let timedOut = false
    let child
    try {
      child = spawn(cmd, args, {
        cwd: options.cwd,
        env: options.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true // its own process group
      })
    } catch (err) {
      resolve({ code: null, signal: null, timedOut: false, ms: 0, stdout: '', stderr: String(err) })
      return
    }
    const add = (text, chunk) => {
      text += chunk
      return text.length > keep * 2 ? text.slice(-keep) : text
    }
    child.stdout.setEncoding('utf8')
    child.stderr.setEncoding('utf8')
    child.stdout.on('data', (c) => { stdout = add(stdout, c) })
    child.stderr.on('data', (c) => { stderr = add(stderr, c) })
    let grace = null
    const timer = setTimeout(() => {
      timedOut = true
      if (options.termGraceMs > 0) {
        try { process.kill(child.pid, 'SIGTERM') } catch {}
        grace = setTimeout(killGroup, options.termGraceMs, child.pid, 'SIGKILL')
      } else {
        killGroup(child.pid, 'SIGKILL')
      }
    }, options.timeoutMs)
    child.on('error', (err) => { stderr = add(stderr, String(err)) })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (grace !== null) clearTimeout(grace)
      // whatever the test left running in its group goes with it
      killGroup(child.pid, 'SIGKILL')
      resolve({
        code,
        signal,
        timedOut,
        ms: Date.now() - started,
        stdout: stdout.slice(-keep),
        stderr: stderr.slice(-keep)
      })
    })
  })
}

function killGroup (pid, signal) {
  if (!pid) return
  try { process.kill(-pid, signal) } catch {}
}

/**
 * Runs `tasks` (functions taking a slot number and returning a promise) `jobs` at a
 * time; the slot (0..jobs-1) lets a task pick resources no concurrent task uses.
 */
async function pool (tasks, jobs, onDone) {
  let next = 0
  const results = new Array(tasks.length)
  async function worker (slot) {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i](slot)
      if (onDone) onDone(i, results[i])
    }
  }
  const workers = []
  for (let s = 0; s < Math.max(1, jobs); s++) workers.push(worker(s))
  await Promise.all(workers)
  return results
}

module.exports = { runProcess, pool, killGroup }
