'use strict'

// src/http: node's http server API (Server, IncomingMessage, ServerResponse) over a
// request queue. The preload (src/register.js) installs these on node's http module.
// Nothing here loads a queue backend until a server listens.

const { STATUS_CODES, METHODS } = require('node:http')
const { Server, createServer, setDefaultBackend } = require('./server')
const { IncomingMessage } = require('./incoming')
const { ServerResponse } = require('./response')
const { listeningServers, closingServers } = require('./server-handle')
const { closeUpgradedSockets } = require('./upgrade-socket')
const https = require('./https-server')

module.exports = {
  createServer,
  Server,
  IncomingMessage,
  ServerResponse,
  STATUS_CODES,
  METHODS,
  setDefaultBackend,
  listeningServers,
  closingServers,
  closeUpgradedSockets,
  // https.Server and https.createServer (the preload installs them on node's https)
  https: { Server: https.Server, createServer: https.createServer }
}
