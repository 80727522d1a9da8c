'use strict'

// The request-queue contract: what every queue backend (the hub client on Linux and
// macOS, the HTTP.SYS addon on Windows) offers to src/http. It mirrors the HTTP Server
// API because that is the stricter of the two: a worker receives requests from a named
// queue, reads bodies on demand, and sends a response as head + body chunks.
// src/http knows nothing about which backend it sits on; a backend knows nothing about
// node's http API. Both backends build on src/queue/attachment-base.js, which owns the
// lifecycle below; test/contract/ checks every backend against this page.
//
// A backend module exports:
//
//   attach(options) -> Promise<Attachment>
//
// options:
//   queue     {string}    name of an existing queue to attach to (under the supervisor);
//   urls      {string[]}  URL prefixes (http://+:8080/) to register when the queue does
//                         not exist yet or has no prefixes of its own (standalone, or an
//                         app started without `urls`); a port of 0 picks a free port;
//   handlers  {Handlers}  the callbacks below; they are called on the JS thread, never
//                         re-entrantly from inside an Attachment method.
//   tls       {object}    optional: what an https server was given to serve TLS with
//                         (key, cert, pfx, passphrase, ca, requestCert,
//                         rejectUnauthorized, as node's https.createServer takes them).
//                         A router that terminates TLS from its own configuration uses
//                         it only where it has no certificate of its own: the hub (the
//                         config's `tls` entries win), never HTTP.SYS (machine bindings,
//                         `httpsys cert`). Secret: a backend never logs it.
//
// Handlers (hot path: plain callbacks, no EventEmitter). A handler that throws must
// not cost other requests anything: the backend finishes the batch it was delivering
// (and acknowledges it to the router), then rethrows on process.nextTick so node's
// uncaught-exception behaviour (a crash, or the app's own handler) still happens.
//   onRequest(req: QueueRequest)        a request was received from the queue
//   onBody(id, chunk: Buffer)           a piece of the request body
//   onBodyEnd(id, trailers)             the request body is complete; trailers: a chunked
//                                       body's trailer fields [name, value, ...] as
//                                       received, or null (none, or a router that does
//                                       not surface them: HTTP.SYS keeps them)
//   onAbort(id)                         the client went away, the router cancelled the
//                                       request, or sending its response failed; no
//                                       further call names this id
//   onDrain(id)                         the response window reopened after respond() or
//                                       sendBody() returned false
//   onConnectionClose(connectionId)     optional, where the router tells (the hub): a client
//                                       connection some request of this attachment came
//                                       on has closed (req.socket's 'close')
//   onConnectionFin(connectionId)       optional, where the router tells (the hub, on a port a
//                                       standalone server owns): a client connection some
//                                       request in flight came on sent its FIN; node aborts
//                                       the requests of it whose response its app has not
//                                       ended (the router then ends the connection after
//                                       the answered ones)
//   onConnectionOpen(conn)              optional, where the router holds a standalone server's
//                                       own port for it (the native router, wire version 6):
//                                       a connection was accepted; conn is the object the
//                                       server uses as its connection
//                                       (src/queue/remote-connection.js)
//   onConnectionError(connectionId, e)  optional, same: what it could not parse on that
//                                       connection ({ status, reason, raw }; status 408: the
//                                       head did not come in time): node's 'clientError'
//   onConnectionTimeout(connectionId)   optional, same: its keep-alive wait ran out
//   onConnectionHeld(connectionId)      optional, same: its answered responses wait for
//                                       a client that takes none, its next request
//                                       unread: not its keep-alive wait until that comes
//   onClose(err|null)                   the attachment ended, once: after close() (null),
//                                       or because the router went away (err has a
//                                       stable code). Every request still in flight got
//                                       onAbort before it.
//
// QueueRequest (a plain object):
//   id                  {number}   unique within the attachment while in flight
//   method              {string}   as sent; one of node's http.METHODS (the router
//                                  answers any other 400: README "The router's rules")
//   url                 {string}   origin-form path + query, undecoded: the path the
//                                  router routed on (urlprefix.js canonicalizeTarget),
//                                  the query as sent
//   httpVersionMajor, httpVersionMinor {number}  2.0 for HTTP/2 (3.0 for HTTP/3)
//   rawHeaders          {string[]} [name, value, name, value, ...] order and repeats kept
//   remoteAddress, remotePort, localAddress, localPort, remoteFamily
//   encrypted           {boolean}  TLS on the client connection
//   tls                 {TlsInfo|null} the client connection's TLS session, when encrypted
//   hasBody             {boolean}  a body follows (onBody... onBodyEnd); when false no
//                                  body callback ever names this id
//   expect              {string|null} an HTTP/1.1 Expect header: 'continue' for
//                                  `100-continue` (the router sends 100 on the first
//                                  readBody() or writeContinue()), 'other' for any other
//                                  expectation (src/http answers 417 unless the app
//                                  listens for 'checkExpectation'), else null
//   connectionId        {number}   the client connection (several requests may share it)
//   keepAlive           {boolean}  the router will keep the connection open after the
//                                  response unless the response asks to close it
//   upgrade             {boolean}  HTTP/1.1, Connection: upgrade and an Upgrade header,
//                                  and no body: the request may be answered 101 with
//                                  RESPONSE_OPAQUE (Upgrades, below); also a CONNECT,
//                                  where the router serves one (a port a standalone
//                                  server owns): answered 2xx with RESPONSE_OPAQUE
//   identity            {WindowsIdentity|null} optional: who the client authenticated as
//                                  (src/queue/windows-identity.js; README "Windows
//                                  authentication"): set by the worker's own layer
//                                  (src/queue/auth-gate.js), never by a router
//   head                {Buffer|null} an upgrade's: the bytes the router had read after
//                                  its head (node's `head` argument of 'upgrade' and
//                                  'connect'); null where there were none or the router
//                                  does not hand them over (HTTP.SYS)
//
// TlsInfo (the router terminates TLS; these answer tls.TLSSocket's questions):
//   protocol            {string|null}  'TLSv1.2', 'TLSv1.3', ...
//   cipher              {{name, standardName, version}|null}
//   alpnProtocol        {string|false} 'h2', 'http/1.1', or false when none was agreed
//   servername          {string|null}  the SNI host name the client asked for
//   authorized          {boolean}      a client certificate was sent and verified
//   authorizationError  {string|null}  why a client certificate did not verify
//   peerCertificate     {Buffer|null}  the client certificate (DER)
//
// Attachment:
//   info                {object}   { queue, urls: string[], ports: number[] } as bound
//                                  (a requested port 0 is resolved here)
//   readBody(id)                   the consumer wants more body; the backend delivers more
//                                  onBody calls (or onBodyEnd). Before the first readBody a
//                                  backend may deliver up to its initial window on its own.
//   respond(id, statusCode, statusMessage, rawHeaders, body, flags, cacheTtl)
//                                  the response head, optionally with (part of) the body.
//                                  rawHeaders is [name, value, ...] as it goes on the wire
//                                  (repeats kept); body is a Buffer, a string (latin1 is
//                                  never assumed: strings are utf8) or null. An empty
//                                  statusMessage means the standard reason phrase.
//                                  Without RESPONSE_MORE this is the whole response: the
//                                  fast path both routers serve with ONE send. Returns
//                                  false when the window is full (wait for onDrain before
//                                  sending more). Once the final response is sent, the
//                                  router discards the unread rest of the request body:
//                                  no further onBody names this id (as HTTP.SYS drains it).
//                                  RESPONSE_CLOSE may be given on respond() or on the
//                                  final sendBody(); either closes after the response.
//                                  cacheTtl (seconds, 0: none) lets the router answer
//                                  this URL from its output cache for that long (the
//                                  rules: src/cache/rules.js, docs/output-cache.md).
//   sendBody(id, chunk, flags)     more of the body (already framed: src/http writes the
//                                  chunked framing for HTTP/1.1 and none for HTTP/2;
//                                  routers never frame). RESPONSE_MORE means more follows;
//                                  without it this ends the response. Returns false like
//                                  respond().
//   writeContinue(id)              send `100 Continue` to the client
//   writeInformational(id, status, reason, rawHeaders)
//                                  an interim response (102, 103) before the final one;
//                                  a router that cannot send one (HTTP.SYS) drops it
//   cancel(id)                     abort the request: the router resets the connection
//                                  (HTTP/2: the stream). The caller does its own abort
//                                  handling: onAbort is not called for an id the worker
//                                  cancelled itself.
//   detach() -> Promise            stop receiving new requests (requests not yet received
//                                  stay in the queue for other workers); in-flight ones can
//                                  still be answered. Resolves once the router confirmed,
//                                  or once the attachment closed. Safe to call again.
//   close()                        end the attachment: requests not answered yet are
//                                  aborted (onAbort each), responses already handed over
//                                  are still delivered, then onClose(null). Safe to call
//                                  again; a no-op once closed.
//   endConnection(connectionId)    optional (the hub): end a client connection this
//                                  attachment had requests of, after what is in flight
//                                  on it (req.socket.end(), or destroy() of an idle one)
//   tellsConnectionClose {boolean} the router reports onConnectionClose
//   ref(), unref()                 like a socket's: whether the attachment keeps the
//                                  process alive (server.unref()).
//
// Upgrades: respond(id, 101, reason, rawHeaders, body, RESPONSE_OPAQUE | RESPONSE_MORE)
// (a CONNECT: any 2xx) to a request with `upgrade` switches the client connection to opaque bytes both ways
// (HTTP.SYS: HTTP_SEND_RESPONSE_FLAG_OPAQUE; the hub: src/hub/tunnel.js). From then on
// onBody carries the client's bytes (readBody asks for more, as for a body) and
// onBodyEnd its FIN; sendBody(id, bytes, RESPONSE_MORE) writes to the client, and a
// sendBody without RESPONSE_MORE is our FIN (HTTP.SYS, which has no half-close, closes
// the connection then, and onBodyEnd follows). The request stays in flight until both
// sides have ended, or until onAbort (a reset) or cancel(id). No body size limit applies.
//
// Statistics a backend may keep are its own business; src/http never depends on them.

/** respond()/sendBody() flag: more body follows in later sendBody() calls. */
const RESPONSE_MORE = 1
/** respond()/sendBody() flag: close the client connection after this response. */
const RESPONSE_CLOSE = 2
/** respond() flag: after a 101 the connection carries opaque bytes both ways (upgrade). */
const RESPONSE_OPAQUE = 4
/**
 * respond() flag: the head says `Connection: close` and the connection stays open all
 * the same (node's last response under maxRequestsPerSocket, on a port a standalone
 * server owns: node only says it). A router that does not give the server its own port
 * closes the connection as RFC 9112 9.6 asks.
 */
const RESPONSE_KEEP_OPEN = 8

/** QueueRequest.expect values */
const EXPECT_CONTINUE = 'continue'
const EXPECT_OTHER = 'other'

/** The callbacks an attachment makes, in the order handlers are documented above. */
const HANDLERS = Object.freeze(['onRequest', 'onBody', 'onBodyEnd', 'onAbort', 'onDrain', 'onClose', 'onConnectionClose', 'onConnectionFin',
  'onConnectionOpen', 'onConnectionError', 'onConnectionTimeout', 'onConnectionHeld'])

module.exports = { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE, RESPONSE_KEEP_OPEN, EXPECT_CONTINUE, EXPECT_OTHER, HANDLERS }
