'use strict'

// Which router a standalone app (`node --require httpsys-cli/register app.js`, no
// supervisor) runs on (issue 25 "Standalone"): the native router, as the app's child;
// HTTPSYS_ROUTER other than native (hub, the removed JS hub, included) is the same
// coded error `httpsys start` gives, at the first listen().

const { spawn } = require('node:child_process')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')

const APP = `
  const http = require('http')
  const { execFileSync } = require('child_process')
  const s = http.createServer((req, res) => res.end('served'))
  s.on('error', (err) => { console.log(JSON.stringify({ error: err.code, key: err.key, message: err.message })) })
  s.listen(0, '127.0.0.1', () => {
    http.get({ port: s.address().port, host: '127.0.0.1', agent: false }, (res) => {
      let body = ''
      res.on('data', (d) => { body += d })
      res.on('end', () => {
        // this process's children, by their program's name
        const children = execFileSync('ps', ['-A', '-o', 'ppid=,comm=']).toString().split('\\n')
          .map((l) => l.trim().split(/\\s+/)).filter(([ppid]) => Number(ppid) === process.pid).map(([, comm]) => comm)
        console.log(JSON.stringify({ body, router: children.some((c) => /httpsys-route/.test(c)) }))
        s.close()
      })
    })
  })
`

function run (extra) {
  const env = standaloneEnv({ HTTPSYS_ROUTER_PATH: routerBin(), ...extra })
  if (extra.HTTPSYS_ROUTER === undefined) delete env.HTTPSYS_ROUTER
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--require', REGISTER, '-e', APP], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), 15000)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, err, lines: out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) })
    })
  })
}

const offWindows = process.platform === 'win32' ? test.skip : test

offWindows('unset or native, the native router serves a standalone app, as its child', async () => {
  for (const env of [{}, { HTTPSYS_ROUTER: 'native' }]) {
    const native = await run(env)
    expect(native.err).toBe('')
    expect(native.lines).toEqual([{ body: 'served', router: true }])
    expect(native.code).toBe(0)
  }
})

test('HTTPSYS_ROUTER that is not native: the server\'s \'error\' at listen() is ERR_HTTPSYS_CONFIG_INVALID naming it', async () => {
  const r = await run({ HTTPSYS_ROUTER: 'go' })
  expect(r.lines).toEqual([{ error: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'HTTPSYS_ROUTER', message: expect.stringMatching(/"go" is not a router.*native/) }])
})

// issue 25: the JS hub was removed; asking for it is said, not silently ignored
test('HTTPSYS_ROUTER=hub (the removed JS hub): the server\'s \'error\' at listen() is ERR_HTTPSYS_CONFIG_INVALID saying it was removed and to unset it', async () => {
  const r = await run({ HTTPSYS_ROUTER: 'hub' })
  expect(r.lines).toEqual([{ error: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'HTTPSYS_ROUTER', message: expect.stringMatching(/JS hub, which was removed \(issue 25\).*Unset HTTPSYS_ROUTER/) }])
})
