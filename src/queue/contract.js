'use strict'

// The request-queue contract: what every queue backend (the hub client on Linux and
// macOS, the HTTP.SYS addon on Windows) offers to src/http. It mirrors the HTTP Server
// API because that is the stricter of the two: a worker receives requests from a named
// queue, reads bodies on demand, and sends a response as head + body chunks.
// src/http knows nothing about which backend it sits on; a backend knows nothing about
// node's http API.
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
//
// Handlers (hot path: plain callbacks, no EventEmitter). A handler that throws must
// not cost other requests anything: the backend finishes the batch it was delivering
// (and acknowledges it to the router), then rethrows on process.nextTick so node's
// uncaught-exception behaviour (a crash, or the app's own handler) still happens.
//   onRequest(req: QueueRequest)        a request was received from the queue
//   onBody(id, chunk: Buffer)           a piece of the request body
//   onBodyEnd(id)                       the request body is complete
//   onAbort(id)                         the client went away or the router cancelled the
//                                       request; no further call names this id
//   onDrain(id)                         the response window reopened after respond() or
//                                       sendBody() returned false
//   onClose(err|null)                   the attachment ended (detach finished, or the
//                                       router went away: err has a stable code)
//
// QueueRequest (a plain object):
//   id                  {number}   unique within the attachment while in flight
//   method              {string}   as sent (known and unknown verbs)
//   url                 {string}   raw path + query, undecoded
//   httpVersionMajor, httpVersionMinor {number}
//   rawHeaders          {string[]} [name, value, name, value, ...] order and repeats kept
//   remoteAddress, remotePort, localAddress, localPort, remoteFamily
//   encrypted           {boolean}  TLS on the client connection
//   tls                 {object|null} TLS details where known
//   hasBody             {boolean}  a body follows (onBody... onBodyEnd); when false no
//                                  body callback ever names this id
//   connectionId        {number}   the client connection (several requests may share it)
//   keepAlive           {boolean}  the router will keep the connection open after the
//                                  response unless the response asks to close it
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
//                                  never assumed: strings are utf8) or null. Without
//                                  RESPONSE_MORE this is the whole response: the fast path
//                                  both routers serve with ONE send. Returns false when the
//                                  window is full (wait for onDrain before sending more).
//                                  Once the final response is sent, the router discards
//                                  the unread rest of the request body: no further onBody
//                                  names this id (as HTTP.SYS drains it).
//                                  RESPONSE_CLOSE may be given on respond() or on the
//                                  final sendBody(); either closes after the response.
//   sendBody(id, chunk, flags)     more of the body (already framed: src/http writes the
//                                  chunked framing; routers never frame). RESPONSE_MORE
//                                  means more follows; without it this ends the response.
//                                  Returns false like respond().
//   writeContinue(id)              send `100 Continue` to the client
//   cancel(id)                     abort the request: the router resets the connection.
//                                  The caller does its own abort handling: onAbort is
//                                  not called for an id the worker cancelled itself.
//   detach() -> Promise            stop receiving new requests (requests not yet received
//                                  stay in the queue for other workers); in-flight ones can
//                                  still be answered. Resolves once the router confirmed.
//   close()                        end the attachment now; in-flight requests are cancelled
//
// Statistics a backend may keep are its own business; src/http never depends on them.

/** respond()/sendBody() flag: more body follows in later sendBody() calls. */
const RESPONSE_MORE = 1
/** respond()/sendBody() flag: close the client connection after this response. */
const RESPONSE_CLOSE = 2
/** respond() flag: after a 101 the connection carries opaque bytes both ways (upgrade). */
const RESPONSE_OPAQUE = 4

function noop () {}

/**
 * The handlers a backend calls, with the missing optional ones as no-ops; present ones
 * keep their `this`.
 * @param {object} h handlers as passed to attach()
 */
function withDefaultHandlers (h) {
  const fn = (name) => typeof h[name] === 'function' ? h[name].bind(h) : noop
  return {
    onRequest: fn('onRequest'),
    onBody: fn('onBody'),
    onBodyEnd: fn('onBodyEnd'),
    onAbort: fn('onAbort'),
    onDrain: fn('onDrain'),
    onClose: fn('onClose')
  }
}

/**
 * Calls a handler for a backend delivering a batch: a throw is kept on `owner.thrown`
 * instead of cutting the batch short (the frames or events after it, and the batch's
 * acknowledgement, would be lost). raiseThrown() hands the errors on afterwards.
 */
function callHandler (owner, fn, a, b) {
  try {
    fn(a, b)
  } catch (err) {
    if (owner.thrown === null) owner.thrown = []
    owner.thrown.push(err)
  }
}

/**
 * Rethrows what callHandler() kept as uncaught exceptions, one tick each as node reports
 * each throwing listener, so node's behaviour is unchanged: a crash, or the app's
 * 'uncaughtException' listener.
 */
function raiseThrown (owner) {
  const errors = owner.thrown
  owner.thrown = null
  for (const err of errors) process.nextTick(rethrow, err)
}

function rethrow (err) {
  throw err
}

module.exports = { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE, withDefaultHandlers, callHandler, raiseThrown }
