'use strict'

// Raw HTTP/1.1 over one TCP connection: for pipelining, keep-alive proofs and
// malformed requests that fetch() refuses to send.

const net = require('node:net')

/** Sends `data` on a new connection and resolves with everything received until the server closes or `idleMs` passes. */
function rawRequest (port, data, { idleMs = 1000, host = '127.0.0.1' } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host)
    const chunks = []
    let timer
    const done = () => { clearTimeout(timer); socket.destroy(); resolve(Buffer.concat(chunks).toString('latin1')) }
    const arm = () => { clearTimeout(timer); timer = setTimeout(done, idleMs) }
    socket.on('connect', () => { socket.write(data); arm() })
    socket.on('data', (c) => { chunks.push(c); arm() })
    socket.on('end', done)
    socket.on('error', (err) => (chunks.length ? done() : reject(err)))
  })
}

/** Splits a byte stream of HTTP/1.1 responses into { status, headers, body } (Content-Length or chunked). */
function parseResponses (text) {
  const out = []
  let rest = text
  while (rest.length) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) break
    const lines = rest.slice(0, end).split('\r\n')
    const status = Number(lines[0].split(' ')[1])
    const headers = {}
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':')
      const name = line.slice(0, i).toLowerCase()
      const value = line.slice(i + 1).trim()
      headers[name] = headers[name] === undefined ? value : [].concat(headers[name], value)
    }
    rest = rest.slice(end + 4)
    let body = ''
    if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const nl = rest.indexOf('\r\n')
        const size = parseInt(rest.slice(0, nl), 16)
        rest = rest.slice(nl + 2)
        if (size === 0) { rest = rest.slice(rest.indexOf('\r\n') + 2); break }
        body += rest.slice(0, size)
        rest = rest.slice(size + 2)
      }
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length'])
      body = rest.slice(0, n)
      rest = rest.slice(n)
    } else if (status !== 204 && status !== 304 && status >= 200) {
      body = rest
      rest = ''
    }
    out.push({ status, headers, body })
  }
  return out
}

module.exports = { rawRequest, parseResponses }
