'use strict'

// Internal state of the public http objects lives behind these symbols, so apps that
// enumerate or spread a request/response never see (or clobber) httpsys internals.

// The response's setHeader() store is node's own slot (OutgoingMessage's kOutHeaders,
// holding [name, value] per lower-cased name, as ours does): libraries that call
// http.OutgoingMessage.prototype.setHeader/getHeader on a response directly (the
// `cookies` module does, under express) then work on the same headers.
function nodeOutHeaders () {
  const { OutgoingMessage } = require('node:http')
  const own = Object.getOwnPropertySymbols(new OutgoingMessage())
  return own.find((s) => s.description === 'kOutHeaders') || Symbol('httpsys.outHeaders')
}

module.exports = {
  // Server
  kBackend: Symbol('httpsys.backend'),
  kHandle: Symbol('httpsys.handle'),
  kPerfProbe: Symbol('httpsys.perfProbe'), // a request's perf_hooks recorder (perf-entries.js)
  kClosing: Symbol('httpsys.closingHandles'),
  kResponseOptions: Symbol('httpsys.responseOptions'),
  kIncomingClass: Symbol('httpsys.incomingClass'),
  kResponseClass: Symbol('httpsys.responseClass'),
  kScheme: Symbol('httpsys.scheme'),
  kTlsOptions: Symbol('httpsys.tlsOptions'),
  kUniqueHeaders: Symbol('httpsys.uniqueHeaders'),

  // shared by IncomingMessage and ServerResponse
  kQueueRequest: Symbol('httpsys.queueRequest'),
  kSocket: Symbol('httpsys.socket'),

  // IncomingMessage
  kHeaders: Symbol('httpsys.headers'),
  kHeadersDistinct: Symbol('httpsys.headersDistinct'),
  kTrailers: Symbol('httpsys.trailers'),
  kTrailersDistinct: Symbol('httpsys.trailersDistinct'),
  kResponse: Symbol('httpsys.response'),
  kJoinDuplicates: Symbol('httpsys.joinDuplicates'),
  kStartTick: Symbol('httpsys.startTick'),

  // ServerResponse
  kOutHeaders: nodeOutHeaders(),
  kState: Symbol('httpsys.responseState')
}
