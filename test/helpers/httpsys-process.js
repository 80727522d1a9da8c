'use strict'

// Starts `bin/httpsys start ...` as a real process for integration tests, waits until
// a URL answers, and stops it (SIGINT, then SIGKILL of its group) afterwards.

const { spawn } = require('node:child_process')
const net = require('node:net')
const path = require('node:path')

const bin = path.join(__dirname, '..', '..', 'bin', 'httpsys')

/** A TCP port free on 127.0.0.1 (the one port helper of the tests: fixtures/apps/harness.js and test/exe use it too). */
function freePort () {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/**
 * @param {string[]} args arguments after `httpsys`
 * @param {{ env?: object, cwd?: string, readyUrl?: string, timeout?: number }} [opts]
 */
async function startHttpsys (args, opts = {}) {
  const proc = spawn(process.execPath, [bin, ...args, '--json'], {
    cwd: opts.cwd,
    env: { ...process.env, HTTPSYS_LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  const logs = []
  let buffered = ''
  const onData = (chunk) => {
    buffered += chunk
    let nl
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      try { logs.push(JSON.parse(line)) } catch { logs.push({ text: line }) }
    }
  }
  proc.stdout.setEncoding('utf8').on('data', onData)
  proc.stderr.setEncoding('utf8').on('data', onData)
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })))
  const handle = { proc, logs, exited, stop: () => stop(proc, exited) }
  if (opts.readyUrl) {
    try {
      await waitForUrl(opts.readyUrl, opts.timeout ?? 15000, exited)
    } catch (err) {
      await handle.stop()
      err.message += `\nhttpsys output:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`
      throw err
    }
  }
  return handle
}

async function waitForUrl (url, timeout, exited) {
  const deadline = Date.now() + timeout
  const state = { gone: false }
  exited.then(() => { state.gone = true })
  while (Date.now() < deadline && !state.gone) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) })
      await res.arrayBuffer()
      if (res.status < 500) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(state.gone ? `httpsys exited before ${url} answered` : `${url} did not answer within ${timeout} ms`)
}

async function stop (proc, exited) {
  if (proc.exitCode === null && proc.signalCode === null) {
    proc.kill('SIGINT')
    const timer = setTimeout(() => { try { process.kill(-proc.pid, 'SIGKILL') } catch {} }, 10000)
    await exited
    clearTimeout(timer)
  }
  return exited
}

module.exports = { startHttpsys, freePort, waitForUrl }
