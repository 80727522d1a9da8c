'use strict'

// node's perf_hooks 'http' entries for server responses: a PerformanceObserver that
// observes 'http' gets one 'HttpRequest' entry per response, from the response's
// creation to its end, with the request's method, url and headers and the response's
// status and headers in `detail` (APM tools read them). node records them inside its own
// ServerResponse (startPerf in the constructor, stopPerf in _finish), behind a check
// that no public API offers. So the preload counts the observers that ask for 'http'
// (install(): PerformanceObserver's observe() and disconnect(), wrapped), and while there
// is one, each of our responses carries one of node's own ServerResponse objects, made
// with the request's fields (node starts the entry) and finished with the response's
// status and headers (node ends and queues it). With no such observer, nothing is made.

// node's own, taken as this module loads (before the preload puts ours on node's http)
const { ServerResponse: NodeServerResponse } = require('node:http')
const { PerformanceObserver } = require('node:perf_hooks')

const kInstalled = Symbol.for('httpsys.perf-entries.installed')
const asking = new WeakSet() // observers that asked for 'http'
let observers = 0

/** Wraps PerformanceObserver's observe() and disconnect() to count 'http' observers. */
function install () {
  const proto = PerformanceObserver.prototype
  if (proto[kInstalled]) return
  Object.defineProperty(proto, kInstalled, { value: true })
  const observe = proto.observe
  const disconnect = proto.disconnect
  Object.defineProperty(proto, 'observe', {
    configurable: true,
    writable: true,
    value: function observe_ (options) {
      const result = observe.apply(this, arguments) // node's checks throw first
      const types = options && (Array.isArray(options.entryTypes) ? options.entryTypes : [options.type])
      if (types.includes('http') && !asking.has(this)) {
        asking.add(this)
        observers++
      }
      return result
    }
  })
  Object.defineProperty(proto, 'disconnect', {
    configurable: true,
    writable: true,
    value: function disconnect_ () {
      if (asking.delete(this)) observers--
      return disconnect.apply(this, arguments)
    }
  })
}

/** @returns {object|null} node's response that records the entry, while 'http' is observed */
function start (req) {
  if (observers === 0) return null
  const probe = Object.create(NodeServerResponse.prototype)
  NodeServerResponse.call(probe, { method: req.method, url: req.url, headers: req.headers, httpVersionMajor: 1, httpVersionMinor: 1 })
  return probe
}

/** The response `res` is complete: node's ends the entry with its status and headers. */
function finish (probe, res) {
  probe.statusCode = res.statusCode
  probe.statusMessage = res.statusMessage
  probe.getHeaders = () => res.getHeaders()
  probe.socket = res // node's _finish asserts a socket; it emits 'prefinish' on probe only
  try {
    NodeServerResponse.prototype._finish.call(probe)
  } catch {}
}

module.exports = { install, start, finish }
