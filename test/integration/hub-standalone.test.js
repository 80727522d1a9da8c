'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { request } = require('../helpers/hub-harness')

const APP = path.join(__dirname, '..', 'helpers', 'hub-standalone-app.js')

describe('standalone backend (no HTTPSYS_HUB)', () => {
  let child

  afterAll(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })

  test('starts its own hub, serves, and lets the process exit once the attachment closes', async () => {
    const env = { ...process.env }
    delete env.HTTPSYS_HUB
    child = spawn(process.execPath, [APP], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
    const info = await new Promise((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]))
      })
      child.on('exit', () => reject(new Error('exited before attaching: ' + out)))
    })
    expect(info.urls[0]).toMatch(/^http:\/\/\+:\d+\/$/)
    const port = info.ports[0]
    expect((await request(port)).body.toString()).toBe('standalone')
    expect((await request(port, { path: '/bye' })).status).toBe(200)
    let timer
    const code = await Promise.race([exited, new Promise((resolve) => { timer = setTimeout(() => resolve('still running'), 5000) })])
    clearTimeout(timer)
    expect(code).toBe(0)
    const leftovers = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(`httpsys-${child.pid}-`))
    expect(leftovers).toEqual([])
  })
})
