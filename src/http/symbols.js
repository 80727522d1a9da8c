'use strict'

// Internal state of the public http objects lives behind these symbols, so apps that
// enumerate or spread a request/response never see (or clobber) httpsys internals.

module.exports = {
  // Server
  kBackend: Symbol('httpsys.backend'),
  kHandle: Symbol('httpsys.handle'),
  kClosing: Symbol('httpsys.closingHandles'),
  kResponseOptions: Symbol('httpsys.responseOptions'),
  kIncomingClass: Symbol('httpsys.incomingClass'),
  kResponseClass: Symbol('httpsys.responseClass'),
  kScheme: Symbol('httpsys.scheme'),
  kTlsOptions: Symbol('httpsys.tlsOptions'),

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
  kOutHeaders: Symbol('httpsys.outHeaders'),
  kState: Symbol('httpsys.responseState')
}
