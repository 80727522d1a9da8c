'use strict'

// Micro-benchmark of the hub's request parser: `node bench/parser.js [iterations]`.
// Prints ns per request for a wrk-style GET and a browser-style GET, next to node's own
// llhttp binding (through the deprecated _http_common module, as a yardstick only).

const { RequestParser } = require('../src/hub/http-parser')

const N = Number(process.argv[2]) || 1e6

const REQUESTS = {
  'wrk GET': 'GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n',
  'browser GET': 'GET /api/users?page=2 HTTP/1.1\r\n' +
    'Host: localhost:8080\r\n' +
    'User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n' +
    'Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n' +
    'Accept-Language: en-US,en;q=0.5\r\n' +
    'Accept-Encoding: gzip, deflate, br\r\n' +
    'Connection: keep-alive\r\n' +
    'Cookie: session=0123456789abcdef; theme=dark\r\n\r\n'
}

function benchOurs (buf) {
  let heads = 0
  const parser = new RequestParser({}, {
    onHead (head) { heads += head.rawHeaders.length },
    onBody () {},
    onComplete () {},
    onError (err) { throw err }
  })
  return time(() => parser.execute(buf), () => heads)
}

function benchLlhttp (buf) {
  let HTTPParser
  try {
    HTTPParser = require('_http_common').HTTPParser
  } catch {
    return NaN
  }
  let heads = 0
  const parser = new HTTPParser()
  parser.initialize(HTTPParser.REQUEST, {})
  parser[HTTPParser.kOnHeadersComplete] = (major, minor, headers) => { heads += headers.length }
  parser[HTTPParser.kOnMessageComplete] = () => {}
  parser[HTTPParser.kOnBody] = () => {}
  parser[HTTPParser.kOnHeaders] = () => {}
  parser[HTTPParser.kOnExecute] = () => {}
  return time(() => parser.execute(buf), () => heads)
}

function time (run, check) {
  for (let i = 0; i < 2e5; i++) run() // warm up the JIT
  const start = process.hrtime.bigint()
  for (let i = 0; i < N; i++) run()
  const ns = Number(process.hrtime.bigint() - start) / N
  if (check() === 0) throw new Error('no request was parsed')
  return ns
}

for (const [name, text] of Object.entries(REQUESTS)) {
  const buf = Buffer.from(text, 'latin1')
  const ours = benchOurs(buf)
  const llhttp = benchLlhttp(buf)
  console.log(`${name.padEnd(12)} ${buf.length} bytes  hub parser ${ours.toFixed(0)} ns/request` +
    (Number.isNaN(llhttp) ? '' : `  node llhttp ${llhttp.toFixed(0)} ns/request`))
}
