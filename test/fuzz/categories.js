'use strict'

// The accepted disagreements between the router's parser (router/internal/parse, Go)
// and llhttp: where the parser is deliberately stricter (or, in a few documented
// places, more lenient) than node. Each category names the rule (README "The router's
// rules", the parser's package comment, the RFC section) and checks the request bytes for the
// condition, so that a disagreement is put here only when the input really has that
// feature; anything else stays unexplained and fails the fuzz run.
//
// A test gets ctx (differential.js): kind ('parser-rejects', 'parser-accepts', 'mismatch',
// 'eof-<parser>-vs-<llhttp>'), text (the request's bytes, latin1, to the end of the
// input), view (a rough split of its head), parserMsg/llMsg (accepted messages),
// parserTerminal/llTerminal (final verdicts, with the head being parsed), diffs (fields
// that differ), parserOn(buf) and llOn(buf) (the verdicts of each on other bytes).

const { METHODS: HTTP_METHODS } = require('node:http')
const { listOf, trimOws, hostPortOk, authorityOf } = require('./rules')

const HOST_CHARS = /^[0-9A-Za-z\-._~%!$&'()*+,;=:[\]]*$/
const LIMIT_REASONS = ['request header section too large', 'trailer section too large', 'chunk extensions too large']
const REJECTS = ['parser-rejects', 'eof-error-vs-incomplete', 'eof-error-vs-clean']
const ACCEPTS = ['parser-accepts', 'eof-incomplete-vs-error', 'eof-clean-vs-error']

const parserReason = (ctx) => ctx.parserTerminal.kind === 'error' ? ctx.parserTerminal.reason : null
const llCode = (ctx) => ctx.llTerminal.kind === 'error' ? ctx.llTerminal.code : null
const isVersion = (v, minor) => v === `HTTP/1.${minor}`
const members = listOf // list members, OWS-trimmed
// does the OWS before or after a field value hold an HTAB? (linear: no regex backtracking)
const owsHasHtab = (raw) => {
  const v = trimOws(raw)
  const at = raw.indexOf(v)
  return raw.slice(0, at).includes('\t') || raw.slice(at + v.length).includes('\t')
}
const framingNames = (names) => names.some((n) => /^(?:content-length|transfer-encoding)$/i.test(n))
// the names of the field lines after the first last-chunk line ("0", "000;ext") of the body
const trailerNames = (ctx) => {
  const lines = bodyLines(ctx)
  const last = lines.findIndex((l) => /^0+(?:[;\r]|$)/.test(l))
  if (last === -1) return []
  const names = []
  for (const l of lines.slice(last + 1)) {
    if (l === '\r' || l === '') break
    names.push(trimOws(l.split(':')[0]))
  }
  return names
}
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/
// chunk-size [ chunk-ext ] by RFC 9112 7.1, 7.1.1 (without the CRLF), scanned in linear time:
// chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ), val = token / quoted-string
function chunkLineOk (line) {
  let i = 0
  const n = line.length
  const ws = () => { while (i < n && (line[i] === ' ' || line[i] === '\t')) i++ }
  const token = () => {
    const s = i
    while (i < n && TCHAR.test(line[i])) i++
    return i > s
  }
  while (i < n && /[0-9A-Fa-f]/.test(line[i])) i++
  if (i === 0) return false
  for (;;) {
    const before = i
    ws()
    if (i === n) return i === before // BWS is only allowed before ";" and around "="
    if (line[i] !== ';') return false
    i++
    ws()
    if (!token()) return false
    const afterName = i
    ws()
    if (i < n && line[i] === '=') {
      i++
      ws()
      if (line[i] === '"') {
        i++
        while (i < n && line[i] !== '"') {
          const c = line.charCodeAt(i)
          if (c === 92) { // quoted-pair: "\" ( HTAB / SP / VCHAR / obs-text )
            const d = line.charCodeAt(i + 1)
            if (!(d === 9 || (d >= 32 && d !== 127 && d <= 255))) return false
            i += 2
          } else if (c === 9 || c === 32 || c === 33 || (c >= 35 && c <= 91) || (c >= 93 && c <= 126) || c >= 128) {
            i++
          } else {
            return false
          }
        }
        if (i >= n) return false
        i++
      } else if (!token()) {
        return false
      }
    } else {
      i = afterName
    }
  }
}
// the chunk-size lines of a chunked body, found by walking the chunks (data skipped by size)
function chunkLines (ctx) {
  const body = ctx.view.afterHead
  const out = []
  let pos = 0
  while (pos < body.length) {
    const lf = body.indexOf('\n', pos)
    const line = body.slice(pos, lf === -1 ? body.length : lf)
    out.push(line)
    const size = /^[0-9A-Fa-f]+/.exec(line)
    if (lf === -1 || !size || size[0].length > 12) break
    const n = Number.parseInt(size[0], 16)
    if (n === 0) break
    pos = lf + 1 + n + 2
  }
  return out
}
const bodyLines = (ctx) => ctx.view.afterHead.split('\n')
const HEAD_FIELDS = ['method', 'url', 'versionMajor', 'versionMinor', 'rawHeaders']
const sameHead = (h, l) => HEAD_FIELDS.every((f) => JSON.stringify(h[f]) === JSON.stringify(l[f]))
// the parser's verdicts at the end of a head on its framing headers
const FRAMING_REASONS = [
  'both Content-Length and Transfer-Encoding, Transfer-Encoding last',
  'both Content-Length and Transfer-Encoding, Content-Length last', 'Transfer-Encoding whose final coding is not chunked',
  'Transfer-Encoding in an HTTP/1.0 request', 'invalid Content-Length', 'several different Content-Length values',
  'empty Content-Length', 'Content-Length above the body size limit'
]

const CATEGORIES = [
  // ---- the parser rejects what llhttp accepts (or is still reading)
  {
    id: 'method-outside-http-METHODS',
    kinds: REJECTS,
    reason: 'Methods are node\'s http.METHODS, case-sensitive; `PRI` gets 400 (README "The router\'s rules"; parser ' +
      'header comment). llhttp\'s table also holds PRI (kept for the HTTP/2 preface, RFC 9113 3.4) and the RTSP ' +
      'methods, which it refuses only later in the line, or reads `PRI /` as an HTTP/0.9 request. A token no ' +
      'http.METHODS entry starts with is refused at once.',
    test: (ctx) => {
      if (parserReason(ctx) !== 'unknown method') return false
      const m = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]*/.exec(ctx.text.replace(/^(?:\r\n)+/, ''))[0]
      if (HTTP_METHODS.includes(m)) return false
      const whole = ctx.text.replace(/^(?:\r\n)+/, '').length > m.length
      return whole || !HTTP_METHODS.some((k) => k.startsWith(m))
    }
  },
  {
    id: 'missing-host',
    kinds: REJECTS,
    reason: 'An HTTP/1.1 request without Host is 400 (RFC 9112 3.2 MUST; README "Malformed requests get 400"; ' +
      'node\'s http server answers 400 too, above llhttp, through requireHostHeader).',
    test: (ctx) => parserReason(ctx) === 'missing Host header' && isVersion(ctx.view.version, 1) &&
      ctx.view.values('host').length === 0
  },
  {
    id: 'invalid-host',
    kinds: REJECTS,
    reason: 'A Host value outside the URI host/port characters is 400 (RFC 9112 3.2: invalid Host value MUST be ' +
      '400; RFC 3986 3.2.2). llhttp does not look at Host; the router routes on it.',
    test: (ctx) => parserReason(ctx) === 'invalid Host header' && ctx.view.values('host').length > 0 &&
      !HOST_CHARS.test(ctx.view.values('host')[0])
  },
  {
    id: 'invalid-host-port',
    kinds: REJECTS,
    reason: 'A Host whose port is not digits is 400 (RFC 3986 3.2.3 port = *DIGIT; HTTP.SYS refuses it; README ' +
      '"The output cache": the app and the cache key see the port, issue 23). llhttp does not look at Host.',
    test: (ctx) => parserReason(ctx) === 'invalid port in Host header' && ctx.view.values('host').length > 0 &&
      HOST_CHARS.test(ctx.view.values('host')[0]) && !hostPortOk(ctx.view.values('host')[0])
  },
  {
    id: 'invalid-target-port',
    kinds: REJECTS,
    reason: 'An absolute-form target whose authority\'s port is not digits is 400: that authority becomes the Host ' +
      'the app sees (the Host port rule above). llhttp checks the characters of the authority, not the port.',
    test: (ctx) => parserReason(ctx) === 'invalid port in the request-target' && typeof ctx.view.target === 'string' &&
      /^[A-Za-z][A-Za-z0-9+\-.]*:\/\//.test(ctx.view.target) && !hostPortOk(authorityOf(ctx.view.target))
  },
  {
    id: 'several-hosts',
    kinds: REJECTS,
    reason: 'Different Host values are 400 (RFC 9112 3.2: more than one Host field line MUST be 400; the parser still ' +
      'tolerates identical repeats). llhttp does not look at Host.',
    test: (ctx) => parserReason(ctx) === 'several different Host headers' && new Set(ctx.view.values('host')).size > 1
  },
  {
    id: 'asterisk-form-outside-options',
    kinds: REJECTS,
    reason: '`*` is only the target of OPTIONS (RFC 9112 3.2.4; parser header comment). llhttp accepts it with any method.',
    test: (ctx) => parserReason(ctx) === 'asterisk-form request-target outside OPTIONS' && ctx.view.target === '*' &&
      ctx.view.method !== 'OPTIONS'
  },
  {
    id: 'authority-or-other-form',
    kinds: REJECTS,
    reason: 'Only origin-form, `scheme://` absolute-form and `OPTIONS *` are routed; authority-form (CONNECT ' +
      'host:port) is 400 since a URL-prefix router has nothing to route it to (RFC 9112 3.2.3; parser header comment).',
    test: (ctx) => parserReason(ctx) === 'request-target is neither origin-form nor absolute-form' &&
      typeof ctx.view.target === 'string' && ctx.view.target[0] !== '/' && ctx.view.target !== '*' &&
      !/^[A-Za-z][A-Za-z0-9+\-.]*:\/\//.test(ctx.view.target)
  },
  {
    id: 'http-0.9-request-line',
    kinds: REJECTS,
    reason: 'A request line without a version is 400: HTTP/0.9 is not served (RFC 9112 2.3, 3; parser header comment ' +
      '"Version: HTTP/d.d or 400"). llhttp takes it for an HTTP/0.9 request, even ended by a bare LF.',
    test: (ctx) => (parserReason(ctx) === 'missing HTTP version' || parserReason(ctx) === 'invalid character in request-target') &&
      /^[^ ]+ [^ ]*$/.test(ctx.view.requestLine.replace(/\r.*$/, ''))
  },
  {
    id: 'version-not-1.x',
    kinds: REJECTS,
    reason: 'Any version but 1.0/1.1 is 505 (RFC 9110 15.6.6; parser header comment). llhttp also accepts HTTP/0.9 and ' +
      'HTTP/2.0 request lines.',
    test: (ctx) => ctx.parserTerminal.status === 505 && /^HTTP\/\d\.\d$/.test(ctx.view.version) &&
      !isVersion(ctx.view.version, 0) && !isVersion(ctx.view.version, 1)
  },
  {
    id: 'transfer-encoding-in-http-1.0',
    kinds: REJECTS,
    reason: 'Transfer-Encoding in an HTTP/1.0 request is 400 (RFC 9112 6.1: the framing MUST be treated as faulty; ' +
      'parser header comment). llhttp decodes it.',
    test: (ctx) => parserReason(ctx) === 'Transfer-Encoding in an HTTP/1.0 request' && isVersion(ctx.view.version, 0) &&
      ctx.view.values('transfer-encoding').length > 0
  },
  {
    id: 'request-line-extra-whitespace',
    kinds: REJECTS,
    reason: 'The request line is `method SP target SP version` with single spaces (RFC 9112 3: parsing on ' +
      'whitespace is only a MAY); llhttp skips extra spaces before the target.',
    test: (ctx) => {
      const line = ctx.view.requestLine
      if (parserReason(ctx) === 'empty request-target') return /^[^ ]+ {2}/.test(line)
      return parserReason(ctx) === 'invalid HTTP version' && / {2}/.test(line) &&
        /^[^ ]+ [^ ]+ (?:H(?:T(?:T(?:P(?:\/(?:\d(?:\.\d?)?)?)?)?)?)?)?\r?$/.test(line.replace(/ +/g, ' '))
    }
  },
  {
    id: 'bare-cr-or-lf-before-request-line',
    kinds: REJECTS,
    reason: 'Only CRLF empty lines are skipped before a request line (RFC 9112 2.2 SHOULD ignore CRLF; a bare CR MUST ' +
      'be treated as invalid; bare LF is only a MAY; parser header comment "CRLF everywhere"). llhttp skips lone CRs and LFs.',
    test: (ctx) => (parserReason(ctx) === 'invalid method' || parserReason(ctx) === 'bare CR before the request line') &&
      /^(?:\r\n)*(?:\n|\r(?!\n))/.test(ctx.text)
  },
  {
    id: 'chunk-ext-outside-the-grammar',
    kinds: REJECTS,
    reason: 'A chunk extension is `;name[=value]` with a token name and a token or quoted-string value (RFC 9112 ' +
      '7.1.1); llhttp accepts more (`;;`, `;name=`, `;a=b""`). The chunk line is checked against the RFC grammar here.',
    test: (ctx) => parserReason(ctx) === 'invalid chunk extension' &&
      chunkLines(ctx).some((l) => l.endsWith('\r') && !chunkLineOk(l.slice(0, -1)))
  },
  {
    id: 'chunked-applied-twice',
    kinds: REJECTS,
    reason: 'chunked twice in Transfer-Encoding is 400 (RFC 9112 6.1: a sender MUST NOT apply chunked more than once; ' +
      'parser header comment); llhttp misses the repeat when whitespace follows the first one.',
    test: (ctx) => parserReason(ctx) === 'Transfer-Encoding whose final coding is not chunked' &&
      members(ctx.view.values('transfer-encoding')).filter((c) => c.toLowerCase() === 'chunked').length > 1
  },
  {
    id: 'transfer-encoding-not-ending-in-chunked',
    kinds: REJECTS,
    reason: 'A request whose Transfer-Encoding does not end in chunked (an empty value included) is 400 (RFC 9112 ' +
      '6.3 item 4: MUST; README "Malformed requests get 400"); llhttp lets an empty value through.',
    test: (ctx) => parserReason(ctx) === 'Transfer-Encoding whose final coding is not chunked' &&
      ctx.view.values('transfer-encoding').length > 0 &&
      (members(ctx.view.values('transfer-encoding')).pop() || '').toLowerCase() !== 'chunked'
  },
  {
    id: 'content-length-above-2^53',
    kinds: REJECTS,
    reason: 'A Content-Length beyond 2^53 - 1 is 413 (parser header comment; JS numbers are exact up to 2^53); llhttp ' +
      'takes up to 2^64 - 1 and waits for the body.',
    test: (ctx) => ctx.parserTerminal.status === 413 && parserReason(ctx) === 'Content-Length above the body size limit' &&
      members(ctx.view.values('content-length')).some((m) => /^[0-9]+$/.test(m) && Number(m) > Number.MAX_SAFE_INTEGER)
  },
  {
    id: 'chunk-size-above-2^53',
    kinds: REJECTS,
    reason: 'A chunk size beyond 2^53 - 1 is 413 (parser: "chunk size too large"); llhttp takes up to 2^64 - 1.',
    test: (ctx) => parserReason(ctx) === 'chunk size too large' &&
      bodyLines(ctx).some((l) => /^[0-9A-Fa-f]+/.test(l) && Number.parseInt(/^[0-9A-Fa-f]+/.exec(l)[0], 16) > Number.MAX_SAFE_INTEGER)
  },
  {
    id: 'size-limit-accounting',
    kinds: REJECTS,
    reason: 'maxHeaderSize (16 KiB) counts the whole head: request line, header lines, CRLFs (parser header comment); ' +
      'node counts only the url, names and values. Chunk extensions count every byte after the size (the parser) or ' +
      'names and values (node). So sections just over 16 KiB by the parser\'s count pass in node.',
    test: (ctx) => {
      const reason = parserReason(ctx)
      if (!LIMIT_REASONS.includes(reason)) return false
      const max = 16384
      const head = ctx.llMsg || ctx.llTerminal.head
      const leading = ctx.view.leading.length
      if (reason === 'request header section too large') {
        const end = ctx.text.indexOf('\r\n\r\n', leading)
        const parserCount = end === -1 ? ctx.text.length - leading : end + 4 - leading
        if (!head) return !ctx.view.complete && parserCount > max
        const nodeCount = head.url.length + head.rawHeaders.reduce((n, f) => n + f.length, 0)
        return parserCount > max && nodeCount < max
      }
      if (reason === 'trailer section too large') {
        const t = ctx.llMsg && ctx.llMsg.trailers
        return ctx.text.length > max && (!t || t.reduce((n, f) => n + f.length, 0) < max)
      }
      let ext = 0
      for (const l of bodyLines(ctx)) {
        const m = /^[0-9A-Fa-f]+([^\r]*)\r$/.exec(l)
        if (m) ext += m[1].length
      }
      return ext > max
    }
  },

  // ---- the parser accepts what llhttp rejects
  {
    id: 'content-length-identical-repeats',
    kinds: ACCEPTS,
    reason: 'Repeated Content-Length fields or list members with one value are taken as that value (RFC 9110 8.6 ' +
      'allows it; RFC 9110 5.6.1: empty list elements are ignored); llhttp rejects any repeat or comma.',
    test: (ctx) => {
      if (llCode(ctx) !== 'HPE_UNEXPECTED_CONTENT_LENGTH' && llCode(ctx) !== 'HPE_INVALID_CONTENT_LENGTH') return false
      const values = ctx.view.values('content-length')
      const list = members(values)
      return list.length > 0 && list.every((m) => /^[0-9]+$/.test(m) && Number(m) === Number(list[0])) &&
        (values.length > 1 || values.some((v) => v.includes(',')))
    }
  },
  {
    id: 'htab-around-a-framing-value',
    kinds: ACCEPTS,
    reason: 'A field value is surrounded by OWS, SP or HTAB (RFC 9112 5, RFC 9110 5.5), Content-Length and ' +
      'Transfer-Encoding included; llhttp refuses an HTAB after a Content-Length or Transfer-Encoding value.',
    test: (ctx) => /^HPE_(?:INVALID|UNEXPECTED)_(?:CONTENT_LENGTH|TRANSFER_ENCODING)$/.test(llCode(ctx) || '') &&
      ctx.view.headers.some(([name, value, line]) => value !== null &&
        /^(?:content-length|transfer-encoding)$/i.test(name) && owsHasHtab(line.slice(line.indexOf(':') + 1))) &&
      (() => {
        const cl = members(ctx.view.values('content-length'))
        const te = members(ctx.view.values('transfer-encoding')).map((c) => c.toLowerCase())
        if (cl.length && te.length) return false
        if (cl.length) return cl.every((m) => /^[0-9]+$/.test(m) && Number(m) === Number(cl[0]))
        return te[te.length - 1] === 'chunked' && te.filter((c) => c === 'chunked').length === 1
      })()
  },
  {
    id: 'transfer-encoding-empty-list-elements',
    kinds: ACCEPTS,
    reason: 'Empty elements of the Transfer-Encoding list are ignored (RFC 9110 5.6.1: a recipient MUST accept and ' +
      'ignore them); llhttp rejects `chunked ,`.',
    test: (ctx) => llCode(ctx) === 'HPE_INVALID_TRANSFER_ENCODING' &&
      ctx.view.values('transfer-encoding').some((v) => /(?:^|,)[ \t]*(?:,|$)/.test(v)) &&
      (() => {
        const codings = members(ctx.view.values('transfer-encoding')).map((c) => c.toLowerCase())
        return codings[codings.length - 1] === 'chunked' && codings.filter((c) => c === 'chunked').length === 1
      })()
  },
  {
    id: 'chunk-ext-bws',
    kinds: ACCEPTS,
    reason: 'Whitespace (BWS) around ";" and "=" of chunk extensions is allowed (RFC 9112 7.1.1 chunk-ext grammar); ' +
      'llhttp rejects it (and when the input ends in such a line, the parser is still reading it).',
    test: (ctx) => (llCode(ctx) === 'HPE_INVALID_CHUNK_SIZE' || llCode(ctx) === 'HPE_STRICT') &&
      chunkLines(ctx).some((l) => /[ \t]/.test(l) &&
        // a valid line with BWS, or the beginning of one, cut by the end of the input
        (l.endsWith('\r') ? chunkLineOk(l.slice(0, -1)) : ['', 'a', '"', 'a"', ';a'].some((more) => chunkLineOk(l + more))))
  },
  {
    id: 'absolute-form-scheme-chars',
    kinds: ACCEPTS,
    reason: 'An absolute-form scheme may hold digits, "+", "-", "." after its first letter (RFC 3986 3.1); llhttp only ' +
      'takes letters.',
    test: (ctx) => {
      if (llCode(ctx) !== 'HPE_INVALID_URL') return false
      const target = ctx.parserMsg ? ctx.parserMsg.url : ctx.view.target || ''
      const m = /^[A-Za-z][A-Za-z0-9+\-.]*:\/\//.exec(target)
      return m !== null && /[0-9+\-.]/.test(m[0].slice(0, -3))
    }
  },
  {
    id: 'header-checked-at-head-end',
    kinds: ['eof-incomplete-vs-error'],
    reason: 'The parser judges Transfer-Encoding and Content-Length at the end of the head; llhttp already when it reads ' +
      'the field. The input ends inside the head; the parser rejects it as soon as the head ends.',
    test: (ctx) => /^HPE_(?:INVALID|UNEXPECTED)_(?:TRANSFER_ENCODING|CONTENT_LENGTH)$/.test(llCode(ctx) || '') &&
      !ctx.view.complete && ctx.parserOn(Buffer.from(ctx.text + '\r\n\r\n', 'latin1')).terminal.kind === 'error'
  },

  // ---- both accept, with different readings
  {
    id: 'keep-alive-close-wins-on-http-1.0',
    kinds: ['mismatch'],
    reason: 'Connection: close ends the connection even next to keep-alive on HTTP/1.0 (RFC 9112 9.3, 9.6); llhttp ' +
      'lets keep-alive win on HTTP/1.0.',
    test: (ctx) => ctx.diffs.length === 1 && ctx.diffs[0] === 'keepAlive' && ctx.parserMsg.versionMinor === 0 &&
      !ctx.parserMsg.keepAlive && (() => {
      const tokens = members(ctx.view.values('connection')).map((t) => t.toLowerCase())
      return tokens.includes('close') && tokens.includes('keep-alive')
    })()
  },
  {
    id: 'connection-list-with-htab',
    kinds: ['mismatch'],
    reason: 'Connection is a comma-separated list whose members may have OWS (SP or HTAB) around them (RFC 9110 ' +
      '5.6.1, 7.6.1), and OWS around a field value is not part of it (RFC 9112 5); llhttp misses a ' +
      'keep-alive/close/upgrade member next to an HTAB, also one that ends the line ("Connection: close<HTAB>"). ' +
      'The parser\'s flags are what the list says (the fuzz driver checks them against its own reading of the list).',
    test: (ctx) => ctx.diffs.length > 0 && ctx.diffs.every((d) => d === 'keepAlive' || d === 'upgrade') &&
      ctx.view.headers.some((h) => h[0].toLowerCase() === 'connection' && h[1] !== null && h[2].slice(h[0].length + 1).includes('\t'))
  },
  {
    id: 'connect-is-not-a-tunnel',
    kinds: REJECTS,
    reason: 'The router opens no tunnels: every CONNECT is 400 at its method token, whatever its target (README ' +
      '"Upgrades and WebSocket"; a 2xx to CONNECT tells a proxy in front that a tunnel is up). llhttp takes every ' +
      'CONNECT for an upgrade.',
    test: (ctx) => parserReason(ctx) === 'CONNECT request-target: the router opens no tunnels' &&
      (ctx.view.method === 'CONNECT' || (!!ctx.llTerminal.head && ctx.llTerminal.head.method === 'CONNECT') ||
        (!!ctx.llMsg && ctx.llMsg.method === 'CONNECT'))
  },
  {
    id: 'upgrade-body-not-checked-by-node',
    kinds: ['mismatch', ...REJECTS, ...ACCEPTS, 'eof-incomplete-vs-clean'],
    reason: 'The parser frames an upgrade request\'s body like any other (parser header comment), so its framing ' +
      'headers must be valid; node stops checking once a request is an upgrade (node_http_parser.cc reports llhttp ' +
      'errors only when !parser_.upgrade) and hands the rest of the stream to the \'upgrade\' listener. Heads agree; ' +
      'only the framing and what follows differ.',
    test: (ctx) => {
      const l = ctx.llMsg || ctx.llTerminal.head
      if (!l || !l.upgrade || l.method === 'CONNECT') return false
      const h = ctx.parserMsg || ctx.parserTerminal.head
      if (!h) return FRAMING_REASONS.includes(parserReason(ctx)) // refused at the end of the head
      return h.upgrade && sameHead(h, l) && !ctx.diffs.some((d) => HEAD_FIELDS.includes(d))
    }
  },
  {
    id: 'framing-fields-in-trailers',
    kinds: ACCEPTS,
    reason: 'Trailers are handed out as head.trailers and never used for framing (RFC 9110 6.5.1: a trailer is not ' +
      'merged into the header section); llhttp rejects Content-Length or Transfer-Encoding in trailers.',
    test: (ctx) => /^HPE_(?:INVALID|UNEXPECTED)_(?:TRANSFER_ENCODING|CONTENT_LENGTH)$/.test(llCode(ctx) || '') &&
      !!(ctx.parserMsg || ctx.parserTerminal.head || {}).chunked && !!ctx.llTerminal.head &&
      (ctx.parserMsg ? framingNames((ctx.parserMsg.trailers || []).filter((_, i) => i % 2 === 0)) : framingNames(trailerNames(ctx)))
  },
  {
    id: 'connection-in-trailers',
    kinds: ACCEPTS,
    reason: 'Whether the connection persists is decided by the head (RFC 9112 9.3); a Connection field in the ' +
      'trailers cannot change it (RFC 9110 6.5.1: control fields are not processed from trailers). llhttp lets ' +
      '`Connection: close` in trailers close the connection and refuses the next request.',
    test: (ctx) => llCode(ctx) === 'HPE_CLOSED_CONNECTION' && !!ctx.prevParserMsg && ctx.prevParserMsg.keepAlive &&
      (ctx.prevParserMsg.trailers || []).some((f, i, t) => i % 2 === 0 && /^connection$/i.test(f) && /close/i.test(t[i + 1]))
  },
  {
    id: 'absolute-form-authority-left-to-router',
    kinds: ACCEPTS,
    reason: 'The parser passes an absolute-form target through when it is VCHAR and `scheme://...` (parser header ' +
      'comment); the router then routes on its authority or answers 400 Invalid URL (README "The router\'s rules": ' +
      'user info or no host). llhttp already checks the characters of the authority.',
    test: (ctx) => llCode(ctx) === 'HPE_INVALID_URL' &&
      ['Unexpected char in url server', 'Double @ in url'].includes(ctx.llTerminal.reason) &&
      /^[A-Za-z][A-Za-z0-9+\-.]*:\/\/[\x21-\x7e]*$/.test(ctx.parserMsg ? ctx.parserMsg.url : ctx.view.target || '')
  },
  {
    id: 'eof-parser-still-reading-the-head',
    kinds: ['eof-incomplete-vs-error'],
    reason: 'The input ends inside a head that llhttp has already rejected; the parser judges a line once it is complete ' +
      '(except the first 64 bytes of a request line) and rejects these bytes as soon as the head ends. Both refuse ' +
      'the request: the parser\'s Finish() answers 400.',
    test: (ctx) => !ctx.parserTerminal.head && ctx.parserOn(Buffer.from(ctx.text + '\r\n\r\n', 'latin1')).terminal.kind === 'error'
  },
  {
    id: 'eof-llhttp-still-reading-the-head',
    kinds: ['eof-error-vs-incomplete'],
    reason: 'The input ends inside a head that the parser has already rejected; llhttp judges some fields only when ' +
      'the next line starts (an empty Content-Length) and rejects these bytes as soon as the head ends. Both ' +
      'refuse the request.',
    test: (ctx) => !ctx.llTerminal.head && (() => {
      const r = ctx.llOn(Buffer.from(ctx.text + '\r\n\r\n', 'latin1'))
      return r.messages.length === 0 && r.terminal.kind === 'error'
    })()
  }
]

module.exports = { CATEGORIES, chunkLineOk }
