'use strict'

// The differential run: the parser's verdicts on an input (the router's Go parser,
// router/internal/parse) against llhttp's
// (node's own parser, llhttp-driver.js), request by request.
//
// Both read the whole input as one buffer. Message k is compared field by field
// (method, url, version, rawHeaders, body, trailers, keepAlive, upgrade) when both
// accept it; the comparison stops after a message that ends the stream for both a
// server and llhttp: one that does not keep the connection alive (the router's
// connection stops reading there; llhttp rejects data after it) or an upgrade (the
// bytes after it are opaque to both). The first difference is the disagreement of
// the input; it is put in the first category of categories.js that explains it, or
// left unexplained (category null), which fails the fuzz run.

const { available, runLlhttp, llMethodName } = require('./llhttp-driver')
const { CATEGORIES } = require('./categories')
const { trimOws } = require('./rules')

/** The parser's events as messages and a terminal verdict. */
function parserVerdicts (events) {
  const messages = []
  let current = null
  let terminal = { kind: 'clean' }
  for (const e of events) {
    if (e[0] === 'head') current = { ...e[1], body: '', trailers: null }
    else if (e[0] === 'body') current.body += e[1]
    else if (e[0] === 'complete') {
      current.trailers = e[1]
      messages.push(current)
      current = null
    } else if (e[0] === 'error') terminal = { kind: 'error', status: e[1], reason: e[2] }
    else if (e[0] === 'finish' && e[1] !== null) terminal = { kind: 'incomplete', status: e[1] }
  }
  terminal.head = current
  return { messages, terminal }
}

const FIELDS = ['method', 'url', 'versionMajor', 'versionMinor', 'rawHeaders', 'body', 'trailers', 'keepAlive', 'upgrade']

function fieldDiffs (h, l) {
  const out = []
  for (const f of FIELDS) {
    let a = h[f]
    let b = l[f]
    if (f === 'trailers') {
      a = a && a.length ? a : null
      b = b && b.length ? b : null
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(f)
  }
  return out
}

/**
 * A rough, tolerant split of the request at `text` (latin1) for the categories: the
 * request line, and the header lines up to the first empty line (LF or CRLF ends).
 */
function roughHead (text) {
  let i = 0
  while (i < text.length && (text[i] === '\r' || text[i] === '\n')) i++
  const rest = text.slice(i)
  const m = /\r?\n\r?\n/.exec(rest)
  const headText = m ? rest.slice(0, m.index) : rest
  const lines = headText.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
  const requestLine = lines[0]
  const parts = requestLine.split(' ')
  const headers = []
  for (const line of lines.slice(1)) {
    const c = line.indexOf(':')
    headers.push(c === -1 ? [line, null, line] : [line.slice(0, c), trimOws(line.slice(c + 1)), line])
  }
  const values = (name) => headers.filter((h) => h[0].toLowerCase() === name && h[1] !== null).map((h) => h[1])
  return {
    leading: text.slice(0, i),
    requestLine,
    method: parts[0],
    target: parts[1],
    version: parts.slice(2).join(' '),
    headers,
    values,
    complete: m !== null,
    headText,
    afterHead: m ? rest.slice(m.index + m[0].length) : ''
  }
}

/**
 * Compares the verdicts on `input`. `reparse(buf)` gives the parser's one-buffer
 * events on other bytes (some categories ask what it makes of a completed input);
 * the Go parser's by default.
 * @returns {{ kind: string|null, category: string|null, detail?: string, info?: object }}
 *   kind null: full agreement; otherwise the first disagreement and its category (null:
 *   unexplained).
 */
function compare (input, parserEvents, boundaries, reparse) {
  const parsed = parserVerdicts(parserEvents)
  const ll = runLlhttp(input)
  const parserOn = (buf) => parserVerdicts((reparse || defaultReparse)(buf))
  const n = Math.max(parsed.messages.length, ll.messages.length)
  for (let k = 0; k <= n; k++) {
    const h = parsed.messages[k]
    const l = ll.messages[k]
    const start = k === 0 ? 0 : boundaries[k - 1]
    for (const m of [l, k === ll.messages.length ? ll.terminal.head : null]) {
      if (m && m.methodIndex !== undefined) {
        const token = /^[\r\n]*([^ \r\n]*)/.exec(input.latin1Slice(start, Math.min(input.length, start + 64)))[1]
        m.method = llMethodName(m.methodIndex, token)
        delete m.methodIndex
      }
    }
    let kind = null
    let diffs = []
    if (h && l) {
      diffs = fieldDiffs(h, l)
      if (diffs.length) kind = 'mismatch'
      else if (!h.keepAlive || h.upgrade) return agreed(parsed, ll, k, 'stream-end')
      else continue
    } else if (h) {
      kind = 'parser-accepts'
    } else if (l) {
      kind = 'parser-rejects'
    } else {
      const a = parsed.terminal.kind
      const b = ll.terminal.kind
      if (a === b) return agreed(parsed, ll, k, a)
      kind = `eof-${a}-vs-${b}`
    }
    const text = input.latin1Slice(start, input.length)
    const ctx = {
      kind,
      k,
      start,
      text,
      view: roughHead(text),
      parserMsg: h || null,
      llMsg: l || null,
      prevParserMsg: k > 0 ? parsed.messages[k - 1] : null,
      parserTerminal: parsed.terminal,
      llTerminal: ll.terminal,
      diffs,
      parserOn,
      llOn: (buf) => runLlhttp(buf)
    }
    const cat = CATEGORIES.find((c) => c.kinds.includes(kind) && c.test(ctx))
    const detail = describe(ctx)
    return { kind, category: cat ? cat.id : null, detail, info: { k, diffs, parser: h ? pick(h, diffs) : parsed.terminal, llhttp: l ? pick(l, diffs) : ll.terminal } }
  }
  return agreed(parsed, ll, n, 'none')
}

function defaultReparse (buf) {
  // required here: fuzz.js requires this file
  return require('./fuzz').defaultTarget().oneBuffer(buf)
}

function agreed (parsed, ll, k, how) {
  return {
    kind: null,
    category: null,
    statusPair: how === 'error' && parsed.messages.length === ll.messages.length
      ? `${parsed.terminal.status} ${ll.terminal.code}`
      : null,
    how
  }
}

function pick (o, fields) {
  if (!fields.length) return { method: o.method, url: o.url }
  const out = {}
  for (const f of fields) out[f] = o[f]
  return out
}

function describe (ctx) {
  const h = ctx.parserMsg ? 'accepted' : `${ctx.parserTerminal.kind}${ctx.parserTerminal.status ? ` ${ctx.parserTerminal.status} "${ctx.parserTerminal.reason || ''}"` : ''}`
  const l = ctx.llMsg ? 'accepted' : `${ctx.llTerminal.kind}${ctx.llTerminal.code ? ` ${ctx.llTerminal.code} "${ctx.llTerminal.reason}"` : ''}`
  return `request ${ctx.k}: parser ${h}, llhttp ${l}${ctx.diffs.length ? `; fields ${ctx.diffs.join(',')}` : ''}`
}

function emptySummary () {
  return { compared: 0, agreed: 0, categories: {}, knownBugs: {}, unexplained: {}, statusPairs: {}, examples: {} }
}

/** Adds one comparison to a summary (counts per category, one example input per category). */
function record (s, d, input, index) {
  s.compared++
  if (d.kind === null) {
    s.agreed++
    if (d.statusPair) s.statusPairs[d.statusPair] = (s.statusPairs[d.statusPair] || 0) + 1
    return
  }
  const key = d.category || `${d.kind}: ${d.detail.replace(/^request \d+: /, '')}`
  const bucket = !d.category ? s.unexplained : d.category.startsWith('known-bug:') ? s.knownBugs : s.categories
  bucket[key] = (bucket[key] || 0) + 1
  if (!s.examples[key] || s.examples[key].bytes > input.length) s.examples[key] = { index, bytes: input.length }
}

module.exports = { available, compare, record, emptySummary, parserVerdicts, roughHead }
