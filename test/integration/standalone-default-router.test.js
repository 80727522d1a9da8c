'use strict'

// Which router a standalone app (`node --require httpsys-cli/register app.js`, no
// supervisor) runs on (issue 25 "Standalone"): the native router, as the app's child;
// HTTPSYS_ROUTER other than native (hub, the removed JS hub, included) is the same
// coded error `httpsys start` gives, at the first listen().

const { runPreloaded } = require('../helpers/run-preloaded')
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

// (HTTPSYS_ROUTER unset unless `extra` sets it)
const run = (extra) => runPreloaded(APP, { env: { HTTPSYS_ROUTER: undefined, HTTPSYS_ROUTER_PATH: routerBin(), ...extra }, timeoutMs: 15000 })

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
