'use strict'

// The contract suite's client for routers reached over TCP (the hub; HTTP.SYS in
// Windows node.exe under Wine): one exchange per request(), through node's own http
// client, reporting what the suite asserts: status and reason, raw headers, the body,
// whether the connection closed after the response, whether it was reset, and whether
// `100 Continue` arrived.

const http = require('node:http')

/**
 * @param {number} port
 * @returns {(r: object) => object} request(r) as test/contract/suite.js describes it
 */
function createHttpClient (port) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })

  function request (r = {}) {
    // raw pairs, so order and repeats reach the router as given; a Host without a port
    // gets the one connected to, as a browser sends it (a Host naming another port is
    // another site: Wine's http.sys leaves such a request hanging)
    const headers = (r.rawHeaders || ['Host', `127.0.0.1:${port}`]).map((v, i, all) =>
      i % 2 === 1 && /^host$/i.test(all[i - 1]) && !/:\d+$/.test(v) ? `${v}:${port}` : v)
    const body = r.body === undefined ? [] : [].concat(r.body)
    let expectContinue = false
    for (let i = 0; i < headers.length; i += 2) {
      if (/^expect$/i.test(headers[i]) && /100-continue/i.test(headers[i + 1])) expectContinue = true
    }
    let continued = false
    let req = null
    const response = new Promise((resolve) => {
      const out = { status: null, reason: null, rawHeaders: [], headers: {}, body: Buffer.alloc(0), closed: false, reset: false }
      let settled = false
      const done = () => {
        if (settled) return
        settled = true
        resolve(out)
      }
      req = http.request({ host: '127.0.0.1', port, method: r.method || 'GET', path: r.url || '/', headers, agent, setHost: false })
      req.on('continue', () => {
        continued = true
        for (const part of body) req.write(part)
        req.end()
      })
      req.on('response', (res) => {
        out.status = res.statusCode
        out.reason = res.statusMessage
        out.rawHeaders = res.rawHeaders
        out.headers = res.headers
        const parts = []
        const socket = res.socket
        let socketClosed = false
        socket.once('close', () => { socketClosed = true })
        res.on('data', (c) => parts.push(c))
        res.on('aborted', () => { out.reset = true })
        res.on('error', () => { out.reset = true })
        res.on('close', () => {
          out.body = Buffer.concat(parts)
          if (!res.complete) out.reset = true
          // a closing router may write `Connection: close` or just end the connection
          if (res.headers.connection === 'close') out.closed = true
          if (socketClosed || out.reset) {
            out.closed = true
            return done()
          }
          const timer = setTimeout(done, 300)
          socket.once('close', () => {
            clearTimeout(timer)
            out.closed = true
            done()
          })
        })
      })
      req.on('error', () => {
        out.reset = true
        out.closed = true
        done()
      })
      if (!expectContinue) {
        for (const part of body) req.write(part)
        if (!r.partial) req.end()
      } else {
        req.flushHeaders()
      }
    })
    return {
      response,
      abort () { req.destroy() },
      continued: () => continued
    }
  }

  request.close = () => agent.destroy()
  return request
}

module.exports = { createHttpClient }
