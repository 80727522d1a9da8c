'use strict'

// The seed corpus of the parser fuzzer: hand-written valid and invalid requests (as
// latin1 strings: one char per byte), and a generator of structured requests built
// from parts (method, request-target, version, header sets, framings, chunk
// extensions, trailers, pipelines). The mutator (mutate.js) starts from either.

const H = 'Host: example.com:8080\r\n'
const CHUNKED = 'Transfer-Encoding: chunked\r\n'
const pad = (n, ch = 'a') => ch.repeat(n)

/** [name, bytes] pairs; bytes are latin1 strings. */
const SEEDS = [
  // valid, plain
  ['get', 'GET / HTTP/1.1\r\n' + H + '\r\n'],
  ['get-browser', 'GET /api/users?page=2 HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n' +
    'Accept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.8\r\nAccept-Encoding: gzip, deflate, br\r\n' +
    'Connection: keep-alive\r\nCookie: session=0123456789abcdef; theme=dark\r\n\r\n'],
  ['get-1.0', 'GET /index.html HTTP/1.0\r\n\r\n'],
  ['get-1.0-keepalive', 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: a\r\n\r\n'],
  ['head', 'HEAD /x HTTP/1.1\r\n' + H + '\r\n'],
  ['options-star', 'OPTIONS * HTTP/1.1\r\n' + H + '\r\n'],
  ['absolute-form', 'GET http://example.com:8080/a/b?c#d HTTP/1.1\r\n' + H + '\r\n'],
  ['absolute-https', 'GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n'],
  ['ipv6-host', 'GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n'],
  ['latin1-value', 'GET / HTTP/1.1\r\n' + H + 'X-Latin: caf\xe9 \xff\x80\r\n\r\n'],
  ['ows-values', 'GET / HTTP/1.1\r\n' + H + 'X-A:   spaced \t \r\nX-Empty:\r\nX-Tab:\tv\r\n\r\n'],
  ['many-headers', 'GET / HTTP/1.1\r\n' + H + Array.from({ length: 40 }, (_, i) => `X-H${i}: v${i}\r\n`).join('') + '\r\n'],
  ['leading-crlf', '\r\n\r\nGET / HTTP/1.1\r\n' + H + '\r\n'],
  ['post-cl', 'POST /form HTTP/1.1\r\n' + H + 'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 11\r\n\r\na=1&b=2&c=3'],
  ['post-cl-0', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 0\r\n\r\n'],
  ['post-cl-1.0', 'POST / HTTP/1.0\r\nContent-Length: 4\r\n\r\nbody'],
  ['cl-repeated-same', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 3\r\nContent-Length: 3, 3\r\n\r\nabc'],
  ['cl-leading-zeros', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 0003\r\n\r\nabc'],
  ['chunked', 'POST /up HTTP/1.1\r\n' + H + CHUNKED + '\r\n4\r\nwiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n'],
  ['chunked-ext', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n4;name=value;q="a \\"quoted\\" ext"\r\nwiki\r\n5 ; bare\r\npedia\r\n0;last\r\n\r\n'],
  ['chunked-trailers', 'POST / HTTP/1.1\r\n' + H + CHUNKED + 'Trailer: Checksum\r\n\r\n3\r\nabc\r\n0\r\nChecksum: xyz\r\nX-T: 1\r\n\r\n'],
  ['chunked-gzip', 'POST / HTTP/1.1\r\n' + H + 'Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n\x1f\x8b\r\n0\r\n\r\n'],
  ['chunked-upper-hex', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\nA\r\n0123456789\r\n00a\r\nabcdefghij\r\n000\r\n\r\n'],
  ['expect-continue', 'PUT /f HTTP/1.1\r\n' + H + 'Expect: 100-continue\r\nContent-Length: 5\r\n\r\nhello'],
  ['expect-other', 'PUT /f HTTP/1.1\r\n' + H + 'Expect: 200-ok\r\nContent-Length: 1\r\n\r\nx'],
  ['connection-list', 'GET / HTTP/1.1\r\n' + H + 'Connection: foo, , keep-alive ,bar\r\nConnection: TE\r\n\r\n'],
  ['connection-close', 'GET / HTTP/1.1\r\n' + H + 'Connection: close\r\n\r\n'],
  ['upgrade', 'GET /ws HTTP/1.1\r\n' + H + 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n\x81\x85opaque'],
  ['unknown-method', 'M-SEARCH * HTTP/1.1\r\nHost: 239.255.255.250:1900\r\n\r\n'],
  ['pipeline', 'GET /1 HTTP/1.1\r\n' + H + '\r\nPOST /2 HTTP/1.1\r\n' + H + 'Content-Length: 5\r\n\r\nhello' +
    'POST /3 HTTP/1.1\r\n' + H + CHUNKED + '\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\nDELETE /4 HTTP/1.1\r\n' + H + 'Content-Length: 0\r\n\r\n'],
  ['pipeline-crlf-between', 'GET /1 HTTP/1.1\r\n' + H + '\r\n\r\nGET /2 HTTP/1.1\r\n' + H + '\r\n'],
  ['pipeline-1.0-then', 'GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\n\r\nGET /3 HTTP/1.1\r\n' + H + '\r\n'],
  ['long-url', 'GET /' + pad(2000, 'u') + ' HTTP/1.1\r\n' + H + '\r\n'],
  ['near-limit-head', 'GET / HTTP/1.1\r\nHost: a\r\nX-Pad: ' + pad(16384 - 44) + '\r\n\r\n'],
  ['over-limit-head', 'GET / HTTP/1.1\r\nHost: a\r\nX-Pad: ' + pad(16384 - 43) + '\r\n\r\n'],
  ['huge-line', 'GET / HTTP/1.1\r\nHost: a\r\nX-Huge: ' + pad(20000) + '\r\n\r\n'],
  ['huge-chunk-ext', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n1;' + pad(17000, 'e') + '\r\nx\r\n0\r\n\r\n'],
  ['big-body', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 3000\r\n\r\n' + pad(3000, 'b')],

  // invalid (each one rule)
  ['no-host-1.1', 'GET / HTTP/1.1\r\nAccept: */*\r\n\r\n'],
  ['two-hosts', 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'],
  ['bad-host', 'GET / HTTP/1.1\r\nHost: a/b@c\r\n\r\n'],
  ['host-port-not-digits', "GET / HTTP/1.1\r\nHost: localhost:'onmouseover='alert(1)'\r\n\r\n"],
  ['target-port-not-digits', 'GET http://localhost:80a/ HTTP/1.1\r\nHost: localhost\r\n\r\n'],
  ['cl-te', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 4\r\n' + CHUNKED + '\r\n0\r\n\r\n'],
  ['te-cl', 'POST / HTTP/1.1\r\n' + H + CHUNKED + 'Content-Length: 4\r\n\r\n0\r\n\r\n'],
  ['cl-different', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 4\r\nContent-Length: 5\r\n\r\nabcde'],
  ['cl-list-different', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 4, 5\r\n\r\nabcde'],
  ['cl-negative', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: -1\r\n\r\n'],
  ['cl-plus', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: +4\r\n\r\nabcd'],
  ['cl-hex', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 0x4\r\n\r\nabcd'],
  ['cl-huge', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 18446744073709551616\r\n\r\n'],
  ['cl-2p53', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 9007199254740993\r\n\r\nabc'],
  ['te-not-last', 'POST / HTTP/1.1\r\n' + H + 'Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n'],
  ['te-twice', 'POST / HTTP/1.1\r\n' + H + CHUNKED + CHUNKED + '\r\n0\r\n\r\n'],
  ['te-1.0', 'POST / HTTP/1.0\r\n' + CHUNKED + '\r\n1\r\na\r\n0\r\n\r\n'],
  ['te-identity', 'POST / HTTP/1.1\r\n' + H + 'Transfer-Encoding: identity\r\n\r\n'],
  ['obs-fold', 'GET / HTTP/1.1\r\n' + H + 'X-Folded: a\r\n  b\r\n\r\n'],
  ['obs-fold-tab', 'GET / HTTP/1.1\r\n' + H + 'X-Folded: a\r\n\tb\r\n\r\n'],
  ['space-before-colon', 'GET / HTTP/1.1\r\nHost : a\r\n\r\n'],
  ['space-before-first-header', 'GET / HTTP/1.1\r\n ' + H + '\r\n'],
  ['bare-lf-head', 'GET / HTTP/1.1\n' + H.replace('\r\n', '\n') + '\n'],
  ['bare-lf-header', 'GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n'],
  ['bare-cr-header', 'GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n'],
  ['bare-lf-between', 'GET /1 HTTP/1.1\r\n' + H + '\r\n\nGET /2 HTTP/1.1\r\n' + H + '\r\n'],
  ['nul-value', 'GET / HTTP/1.1\r\n' + H + 'X: a\x00b\r\n\r\n'],
  ['nul-target', 'GET /a\x00 HTTP/1.1\r\n' + H + '\r\n'],
  ['del-value', 'GET / HTTP/1.1\r\n' + H + 'X: a\x7fb\r\n\r\n'],
  ['utf8-target', 'GET /caf\xc3\xa9 HTTP/1.1\r\n' + H + '\r\n'],
  ['two-spaces', 'GET  / HTTP/1.1\r\n' + H + '\r\n'],
  ['trailing-space-version', 'GET / HTTP/1.1 \r\n' + H + '\r\n'],
  ['http-0.9', 'GET /\r\n\r\n'],
  ['http-2.0', 'GET / HTTP/2.0\r\n' + H + '\r\n'],
  ['http-1.2', 'GET / HTTP/1.2\r\n' + H + '\r\n'],
  ['h2-preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
  ['lower-version', 'GET / http/1.1\r\n' + H + '\r\n'],
  ['asterisk-get', 'GET * HTTP/1.1\r\n' + H + '\r\n'],
  ['authority-form', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
  ['relative-target', 'GET a/b HTTP/1.1\r\n' + H + '\r\n'],
  ['bad-method', 'G(T / HTTP/1.1\r\n' + H + '\r\n'],
  ['tls-hello', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' + pad(32, '\x00')],
  ['chunk-bad-size', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\nzz\r\n'],
  ['chunk-size-space', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n1 \r\nx\r\n0\r\n\r\n'],
  ['chunk-bare-lf', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n1\nx\r\n0\r\n\r\n'],
  ['chunk-data-no-crlf', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n1\r\nxy\r\n0\r\n\r\n'],
  ['chunk-ext-empty-value', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n1;a=\r\nx\r\n0\r\n\r\n'],
  ['chunk-ext-unterminated', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n1;a="x\r\nx\r\n0\r\n\r\n'],
  ['chunk-size-overflow', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\nfffffffffffffffff\r\n'],
  ['chunk-size-2p53', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n20000000000001\r\nabc'],
  ['trailer-bare-lf', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n0\r\nT: 1\nX: 2\r\n\r\n'],
  ['trailer-obs-fold', 'POST / HTTP/1.1\r\n' + H + CHUNKED + '\r\n0\r\nT: 1\r\n 2\r\n\r\n'],
  ['truncated-body', 'POST / HTTP/1.1\r\n' + H + 'Content-Length: 10\r\n\r\nabc'],
  ['truncated-head', 'GET / HTTP/1.1\r\nHost: exa'],
  ['lone-cr', '\r'],
  ['empty', '']
]

const METHODS = [
  [40, 'GET'], [20, 'POST'], [6, 'PUT'], [4, 'HEAD'], [3, 'DELETE'], [3, 'OPTIONS'], [2, 'PATCH'],
  [1, 'CONNECT'], [1, 'TRACE'], [1, 'M-SEARCH'], [1, 'PROPFIND'], [1, 'PURGE'], [1, 'QUERY'], [1, 'get'],
  [1, 'FOO'], [1, 'PRI'], [1, 'SOURCE'], [1, 'X!#$%&\'*+-.^_`|~9']
]
const TARGETS = [
  [30, '/'], [20, '/a/b?c=d&e'], [4, '/%7e/%zz/..;/x#frag'], [3, '*'], [4, 'http://example.com:8080/x?y'],
  [2, 'https://a:1'], [1, 'HTTP://A/'], [1, 'x-y+z.w://h/'], [1, 'example.com:443'], [1, 'a/b'],
  [1, "http://a:'x'/"], [1, 'http://a:1b/'], [1, 'http://[::1]:8/'], [1, 'http://a:/'],
  [1, '/"<>{}|\\^`'], [1, "/!$&'()*+,;=:@"], [1, 'mailto:x'], [1, 'http:/x']
]
const VERSIONS = [
  [60, 'HTTP/1.1'], [20, 'HTTP/1.0'], [1, 'HTTP/2.0'], [1, 'HTTP/0.9'], [1, 'HTTP/1.2'], [1, 'HTTP/3.0'],
  [1, 'http/1.1'], [1, 'HTTP/1.1 '], [1, 'HTTP/11'], [1, '']
]
const HOSTS = [
  [30, 'example.com:8080'], [10, 'localhost'], [5, '127.0.0.1:80'], [3, '[::1]:8080'], [2, 'EXAMPLE.com'],
  [1, ''], [1, 'a b'], [1, 'a/b'], [1, 'user@host'], [1, 'h\xe9'], [1, "a!$&'()*+,;=%~_-."],
  // the port rule (issue 23): digits only, after the first ":" or an IP literal's "]"
  [1, "localhost:'x'"], [1, 'a:80a'], [1, 'a:1:2'], [1, 'localhost:'], [1, '[::1]x'], [1, '[::1]:'], [1, 'a:+1'],
  [1, '[::1']
]
const CONNECTION = [
  'close', 'keep-alive', 'Keep-Alive', 'CLOSE', 'upgrade', 'Upgrade, HTTP2-Settings', 'keep-alive, close',
  'foo, , bar', ', close ,', 'closed', 'close-ish', 'TE, close', 'keep-alive,upgrade', 'keep-alive , upgrade'
]
const EXPECT = ['100-continue', '100-Continue', '200-ok', '', '100-continue, foo']
const TE = [
  [20, 'chunked'], [3, 'gzip, chunked'], [2, 'Chunked'], [1, 'chunked, gzip'], [1, 'chunked, chunked'],
  [1, 'identity'], [1, ' , chunked'], [1, 'chunked '], [1, 'gzip chunked'], [1, 'xchunked'], [1, 'chunked;q=1']
]
const COMMON = [
  ['User-Agent', 'curl/8.5.0'], ['Accept', '*/*'], ['Accept-Encoding', 'gzip, deflate'],
  ['Cookie', 'a=b; c=d'], ['Content-Type', 'text/plain; charset=utf-8'], ['X-Forwarded-For', '10.0.0.1, 10.0.0.2'],
  ['Authorization', 'Basic dXNlcjpwYXNz'], ['Cache-Control', 'no-cache'], ['Referer', 'http://a/b'],
  ['X-Empty', ''], ['X-Ows', '  v \t'], ['X-Latin', 'caf\xe9'], ['x-lower', 'v'], ['TE', 'trailers'],
  ['Trailer', 'X-Checksum'], ['Upgrade', 'websocket'], ['Sec-WebSocket-Key', 'dGhlIHNhbXBsZSBub25jZQ==']
]
const EXT_NAMES = ['a', 'name', 'sig', 'x-y', 'ieof']
const EXT_VALUES = ['1', 'value', '"quoted"', '"a \\"b\\" c"', '"\xe9"', '""', 'tok~en!']

/**
 * One structured request (latin1 string). Mostly valid; the parts lists above carry
 * the invalid variants, picked rarely.
 */
function structuredRequest (rng) {
  const method = rng.weighted(METHODS)
  const target = rng.weighted(TARGETS)
  const version = rng.weighted(VERSIONS)
  const eol = rng.chance(0.02) ? rng.pick(['\n', '\r', '\r\r\n', '\n\r']) : '\r\n'
  const lines = [version === '' ? `${method} ${target}` : `${method} ${target} ${version}`]
  const headers = []
  if (rng.chance(version === 'HTTP/1.0' ? 0.3 : 0.95)) headers.push(['Host', rng.weighted(HOSTS)])
  if (rng.chance(0.03)) headers.push([rng.pick(['Host', 'host', 'HOST']), rng.chance(0.5) ? headers.length ? headers[0][1] : 'a' : 'other'])
  for (let n = rng.geometric(0.45, 12); n > 0; n--) headers.push(rng.pick(COMMON))
  if (rng.chance(0.25)) headers.push([rng.pick(['Connection', 'connection']), rng.pick(CONNECTION)])
  if (rng.chance(0.06)) headers.push(['Expect', rng.pick(EXPECT)])
  if (rng.chance(0.05)) headers.push(['Upgrade', rng.pick(['websocket', '', 'h2c'])])

  // framing
  let body = ''
  const framing = rng.weighted([[50, 'none'], [25, 'cl'], [20, 'chunked'], [2, 'both'], [3, 'te-other']])
  if (framing === 'cl' || framing === 'both') {
    const len = rng.weighted([[10, rng.int(20)], [2, rng.int(3000)], [1, 0]])
    body = 'x'.repeat(len).replace(/x/g, () => String.fromCharCode(rng.range(0x20, 0x7e)))
    const value = rng.weighted([[20, String(len)], [1, `${len}, ${len}`], [1, ` ${len} `], [1, `0${len}`], [1, String(len + 1)], [1, `${len},`]])
    headers.push([rng.pick(['Content-Length', 'content-length', 'CONTENT-LENGTH']), value])
    if (rng.chance(0.05)) headers.push(['Content-Length', rng.chance(0.5) ? value : String(len + 2)])
  }
  if (framing === 'chunked' || framing === 'both' || framing === 'te-other') {
    headers.push([rng.pick(['Transfer-Encoding', 'transfer-encoding']), framing === 'te-other' ? rng.weighted(TE) : rng.chance(0.9) ? 'chunked' : rng.weighted(TE)])
    body = chunkedBody(rng)
  }
  shuffleSome(rng, headers)
  for (const [name, value] of headers) lines.push(`${name}:${rng.chance(0.9) ? ' ' : rng.pick(['', '  ', '\t'])}${value}`)
  return lines.join(eol) + eol + eol + body
}

function chunkedBody (rng) {
  let out = ''
  for (let n = rng.geometric(0.35, 8); n > 0; n--) {
    const size = rng.weighted([[10, rng.range(1, 20)], [2, rng.range(21, 600)], [1, 0]])
    if (size === 0) continue
    let hex = size.toString(16)
    if (rng.chance(0.2)) hex = hex.toUpperCase()
    if (rng.chance(0.1)) hex = '0'.repeat(rng.range(1, 3)) + hex
    out += hex + chunkExtensions(rng) + '\r\n'
    for (let i = 0; i < size; i++) out += String.fromCharCode(rng.chance(0.9) ? rng.range(0x61, 0x7a) : rng.int(256))
    out += '\r\n'
  }
  out += (rng.chance(0.1) ? '000' : '0') + chunkExtensions(rng) + '\r\n'
  for (let n = rng.geometric(0.7, 4); n > 0; n--) out += rng.pick(['X-Checksum: abc\r\n', 'T: 1\r\n', 'Expires: never\r\n', 'Host: trailer\r\n'])
  return out + '\r\n'
}

function chunkExtensions (rng) {
  let out = ''
  for (let n = rng.geometric(0.6, 4); n > 0; n--) {
    const bws = () => rng.chance(0.1) ? rng.pick([' ', '\t', '  ']) : ''
    out += bws() + ';' + bws() + rng.pick(EXT_NAMES)
    if (rng.chance(0.6)) out += bws() + '=' + bws() + rng.pick(EXT_VALUES)
  }
  return out
}

function shuffleSome (rng, arr) {
  for (let n = rng.geometric(0.5, 4); n > 0 && arr.length > 1; n--) {
    const i = rng.int(arr.length)
    const j = rng.int(arr.length)
    const t = arr[i]
    arr[i] = arr[j]
    arr[j] = t
  }
}

/** A pipeline of one to four structured requests, sometimes with empty lines between. */
function structuredInput (rng) {
  let out = rng.chance(0.05) ? '\r\n' : ''
  for (let n = 1 + rng.geometric(0.6, 3); n > 0; n--) {
    out += structuredRequest(rng)
    if (rng.chance(0.05)) out += rng.pick(['\r\n', '\r\n\r\n', '\n', '\r'])
  }
  return out
}

module.exports = { SEEDS, structuredInput, structuredRequest }
