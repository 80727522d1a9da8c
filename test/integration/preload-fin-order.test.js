'use strict'

// When the worker hears of a client's FIN on a port a standalone server owns (CONN_FIN):
// node reads a FIN in an I/O callback of its own, so what its server learns from other
// sockets in the same turn of the loop comes after it. A proxy whose client went away
// just before its upstream answered: the upstream's answer, piped into the response,
// finds it closed ('close', no 'finish'), as node's test-http-writable-true-after-close.js
// expects. Each app runs on node's stack and with the preload.

const path = require('node:path')
const { both } = require('../helpers/run-preloaded')

const ROOT = path.join(__dirname, '..', '..')

test('a proxy\'s client aborts, then its upstream ends: the response says \'close\' without \'finish\', as node\'s', async () => {
  const code = `
    const http = require('http')
    const seen = []
    let upstream, client
    const proxy = http.createServer((req, res) => {
      res.on('finish', () => seen.push('finish'))
      res.on('close', () => seen.push('close ' + res.writable))
      http.get('http://127.0.0.1:' + upstream.address().port, (inner) => inner.pipe(res))
    }).listen(0, () => {
      upstream = http.createServer((req, res) => {
        res.writeHead(200)
        setImmediate(() => { client.abort(); res.end('Hello World\\n') })
      }).listen(0, () => {
        client = http.get('http://127.0.0.1:' + proxy.address().port)
        client.on('error', () => setTimeout(() => {
          console.log(JSON.stringify(seen))
          proxy.close()
          upstream.close()
        }, 200))
      })
    })
  `
  const runs = []
  // three rounds: the order is a race that ours lost every time before
  for (let i = 0; i < 3; i++) runs.push(await both(code, { cwd: ROOT }))
  for (const r of runs) {
    expect(r.node).toEqual([['close true']])
    expect(r.ours).toEqual(r.node)
  }
}, 60000)
