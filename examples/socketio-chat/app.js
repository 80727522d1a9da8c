'use strict'

// A socket.io chat, unchanged for httpsys: plain node http serves the page, socket.io
// attaches to the same server and takes its upgrades (websocket) and its long-polling
// requests. Every message goes to everyone connected.
//
// It uses socket.io from the repository root: run `npm install` at the root first. Then:
//   node examples/socketio-chat/app.js                  plain node, port 3000
//   npx httpsys start examples/socketio-chat/app.js     the same app through the router
//
// One instance: socket.io's polling transport sends each client's requests to the
// process that holds its session, which a queue shared by several instances does not
// promise; several instances need `transports: ['websocket']` in the clients and an
// adapter that broadcasts between processes (socket.io's redis adapter, for one).

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { Server } = require('socket.io')

const page = fs.readFileSync(path.join(__dirname, 'index.html'))

const server = http.createServer((req, res) => {
  if (req.url === '/' || req.url === '/index.html') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': page.length })
    res.end(page)
    return
  }
  res.writeHead(404, { 'content-type': 'text/plain' })
  res.end('not found\n')
})

const io = new Server(server)
io.on('connection', (socket) => {
  const name = String(socket.handshake.query.name || 'guest').slice(0, 32)
  socket.broadcast.emit('joined', name)
  socket.on('chat', (text) => io.emit('chat', { name, text: String(text).slice(0, 1000) }))
  socket.on('disconnect', () => socket.broadcast.emit('left', name))
})

const port = Number(process.env.PORT) || 3000
server.listen(port, () => console.log(`socket.io chat on http://localhost:${port}/ (pid ${process.pid})`))
