'use strict'

// A WebSocket endpoint on a URL whose page the output cache holds: the upgrade request
// reaches the app and switches protocols, it is never answered with the stored page. A
// standalone app on the native router, the app's child (issue 25).

const { spawn } = require('node:child_process')
const path = require('node:path')
const WebSocket = require('ws')
const { standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')

const REGISTER = path.join(__dirname, '..', '..', 'src', 'register.js')

let child
afterEach(() => { if (child && child.exitCode === null) child.kill('SIGKILL') })

const ROUTERS = [
  ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
]

test.each(ROUTERS)('%s: an upgrade request to a cached URL reaches the app, and the page stays cached for GETs', async (name, routerEnv) => {
  const env = standaloneEnv(routerEnv())
  child = spawn(process.execPath, ['-r', REGISTER, '-e', `
    const http = require('node:http')
    const { WebSocketServer } = require('ws')
    let pages = 0
    const server = http.createServer((req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=60')
      res.end('page ' + (++pages))
    })
    new WebSocketServer({ server }).on('connection', (ws) => ws.on('message', (m) => ws.send('echo ' + m)))
    server.listen(0, () => console.log(server.address().port))
  `], { env, cwd: path.join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] })
  const port = Number(await new Promise((resolve) => child.stdout.once('data', resolve)))
  const page = () => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text())
  expect(await page()).toBe('page 1')
  expect(await page()).toBe('page 1') // stored

  const ws = new WebSocket(`ws://127.0.0.1:${port}/`)
  const echoed = await new Promise((resolve, reject) => {
    ws.once('open', () => ws.send('hi'))
    ws.once('message', (m) => resolve(String(m)))
    ws.once('error', reject)
  })
  expect(echoed).toBe('echo hi')
  ws.close()
  expect(await page()).toBe('page 1')
})
