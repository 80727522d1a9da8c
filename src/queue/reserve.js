'use strict'

// reserve() for a backend whose queue the supervisor made (src/wire/contract.js): what
// a server's listen() can know before its attach() completes, so address() answers at
// once as node's does after a synchronous bind.
//
// - Under the supervisor, a queue created with the app's `urls` is bound before the
//   worker starts: its prefixes (HTTPSYS_QUEUE_URLS) are the server's, bound now.
// - Otherwise (an app without `urls`, whose first listen() decides its prefix) the
//   port asked for is known but the router binds it on attach: address() reports it,
//   'listening' waits for the attach. listen(0) knows nothing until then.

const { readWorkerEnv } = require('../worker-interface')

/**
 * @param {{queue?: string, urls?: string[]}} options what attach() will be given
 * @param {object} [env=process.env]
 * @returns {{bound: boolean, known: boolean, urls: string[], ports: number[]}|null}
 *   bound: the router listens on the ports now; known: address() may report them
 */
function reserveFromEnv (options, env = process.env) {
  const worker = readWorkerEnv(env)
  if (options.queue !== undefined && options.queue !== null && worker.queueUrls.length > 0) {
    return { bound: true, known: true, urls: worker.queueUrls, ports: portsOf(worker.queueUrls) }
  }
  const ports = portsOf(options.urls || [])
  if (ports.length === 0 || ports.includes(0)) return null
  return { bound: false, known: true, urls: options.urls.slice(), ports }
}

function portsOf (urls) {
  const out = []
  for (const u of urls) {
    const m = /^[a-z]+:\/\/(?:\[[^\]]*\]|[^/:]*):(\d+)/i.exec(u || '')
    if (m !== null && !out.includes(Number(m[1]))) out.push(Number(m[1]))
  }
  return out
}

module.exports = { reserveFromEnv, portsOf }
