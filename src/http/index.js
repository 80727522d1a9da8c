'use strict'

// src/http: node's http server API (Server, IncomingMessage, ServerResponse) over a
// request queue. The preload (src/register.js) installs these on node's http module.
// Nothing here loads a queue backend until a server listens.

const { STATUS_CODES, METHODS } = require('node:http')
const { Server, createServer, setDefaultBackend } = require('./server')
const { IncomingMessage } = require('./incoming')
const { ServerResponse } = require('./response')
const { listeningServers } = require('./server-handle')

module.exports = {
  createServer,
  Server,
  IncomingMessage,
  ServerResponse,
  STATUS_CODES,
  METHODS,
  setDefaultBackend,
  listeningServers
}
