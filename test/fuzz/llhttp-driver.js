'use strict'

// node's own request parser (llhttp, through the HTTPParser binding that node's http
// server uses) as the reference of the differential run. `require('_http_common')` is
// an internal module (not a documented API) but loads without a warning on node 20 and
// 22; when it is missing, `available` is false and the differential run is skipped.
//
// The parser is set up as node's server does: REQUEST, no lenient flags, the same
// maxHeaderSize as the hub's default. Like node's parserOnHeadersComplete, headers and
// url flushed early through kOnHeaders (more than 32 fields, or a head split over
// execute() calls) are joined to those of kOnHeadersComplete; trailers arrive through
// kOnHeaders right before kOnMessageComplete.

const { METHODS: HTTP_METHODS } = require('node:http')

let HTTPParser = null
let METHODS = []
try {
  ({ HTTPParser, methods: METHODS } = require('_http_common'))
} catch {}

const available = typeof HTTPParser === 'function' && typeof HTTPParser.REQUEST === 'number'

// execute() and finish() return an Error of the main realm: under jest's vm contexts
// `instanceof Error` is false for it, so errors are told by shape
const isError = (x) => x !== null && typeof x === 'object' && typeof x.code === 'string'

let shared = null
let st = null // the state of the current run, read by the shared parser's callbacks

function parser () {
  if (shared !== null) return shared
  const p = new HTTPParser()
  p[HTTPParser.kOnMessageBegin] = () => {}
  p[HTTPParser.kOnHeaders] = (headers, url) => {
    st.headers.push(...headers)
    st.url += url
  }
  p[HTTPParser.kOnHeadersComplete] = (major, minor, headers, method, url, statusCode, statusMessage, upgrade, keepAlive) => {
    if (!headers) {
      headers = st.headers
      st.headers = []
    }
    if (!url) {
      url = st.url
      st.url = ''
    }
    st.current = {
      // node's server names methods from llhttp's whole table (allMethods, reachable only
      // through the deprecated process.binding()); _http_common's list matches it except
      // for methods llhttp numbers beyond it (QUERY). differential.js names those from
      // the request line; see llMethodName().
      method: METHODS[method],
      methodIndex: method,
      url,
      versionMajor: major,
      versionMinor: minor,
      rawHeaders: headers.slice(),
      body: '',
      trailers: null,
      upgrade: !!upgrade,
      keepAlive: !!keepAlive
    }
    return 0
  }
  p[HTTPParser.kOnBody] = (chunk) => {
    st.current.body += chunk.latin1Slice(0, chunk.length)
  }
  p[HTTPParser.kOnMessageComplete] = () => {
    const m = st.current
    if (st.headers.length) m.trailers = st.headers
    st.headers = []
    st.url = '' // as parserOnMessageComplete: the trailers' flush repeats the url
    st.messages.push(m)
    st.current = null
  }
  p[HTTPParser.kOnExecute] = () => {}
  shared = p
  return p
}

/**
 * Parses `input` (one execute() and finish(), as a server reading it in one piece).
 * @returns {{ messages: object[], terminal: { kind: 'clean'|'incomplete'|'error', code?: string, reason?: string, at?: number }, consumed: number }}
 *   messages: completed requests (method, url, version, rawHeaders, body, trailers,
 *   upgrade, keepAlive); `current` (a head without its end) is left in terminal.head.
 */
function runLlhttp (input, { maxHeaderSize = 16384 } = {}) {
  const p = parser()
  st = { headers: [], url: '', messages: [], current: null }
  p.initialize(HTTPParser.REQUEST, {}, maxHeaderSize, HTTPParser.kLenientNone)
  let terminal
  let consumed = input.length
  const r = p.execute(input)
  if (isError(r)) {
    terminal = { kind: 'error', code: r.code, reason: r.reason, at: r.bytesParsed }
    consumed = r.bytesParsed
  } else {
    consumed = r
    const f = p.finish()
    if (isError(f)) terminal = { kind: f.code === 'HPE_INVALID_EOF_STATE' ? 'incomplete' : 'error', code: f.code, reason: f.reason }
    else terminal = { kind: 'clean' }
  }
  terminal.head = st.current
  const out = { messages: st.messages, terminal, consumed }
  st = null
  return out
}

/**
 * The name of llhttp's method number `index` for a request whose line starts with
 * `token`. _http_common.methods is llhttp's table up to its last entry, which node
 * appends out of llhttp's order (QUERY, number 46 for llhttp, is last there): from that
 * entry on, a token node knows as a method (http.METHODS) names it.
 */
function llMethodName (index, token) {
  if (METHODS[index] === token) return token
  if (index >= METHODS.length - 1 && HTTP_METHODS.includes(token)) return token
  return METHODS[index]
}

module.exports = { available, runLlhttp, llMethodName, METHODS }
