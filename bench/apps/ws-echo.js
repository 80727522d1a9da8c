'use strict'

// WebSocket echo with ws: the app the WebSocket benchmark runs under bare node and
// under httpsys (bench/websocket.js).

const http = require('node:http')
const { WebSocketServer } = require('ws')

const server = http.createServer((req, res) => res.end('ok'))
const wss = new WebSocketServer({ server, perMessageDeflate: false })
wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })))
server.listen(Number(process.env.PORT) || 3000)
