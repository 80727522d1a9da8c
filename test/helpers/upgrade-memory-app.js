'use strict'

// An app for the routers' memory test of upgraded connections (router-memory.test.js),
// run with the preload (--require src/register.js) against HTTPSYS_HUB: GET /ping
// answers pong; an upgrade to /push writes SIZE bytes into the tunnel with backpressure
// (a write() that returns false waits for 'drain'); an upgrade to /hold never reads its
// tunnel (the socket paused), so what its client sends waits.

const http = require('node:http')

const SIZE = 32 * 1024 * 1024
const CHUNK = Buffer.alloc(64 * 1024, 120)

const server = http.createServer((req, res) => res.end('pong'))
server.on('upgrade', (req, socket) => {
  socket.on('error', () => {})
  socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n')
  if (req.url === '/hold') {
    socket.pause()
    return
  }
  let sent = 0
  const pump = () => {
    while (sent < SIZE) {
      sent += CHUNK.length
      if (!socket.write(CHUNK)) {
        socket.once('drain', pump)
        return
      }
    }
  }
  pump()
})
server.listen(8080)
