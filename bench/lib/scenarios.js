'use strict'

// The matrix's scenarios: which app every target serves, and what load wrk (or
// autocannon) makes. `app` is what bare node, the cluster and httpsys run; `nginxApp`
// is what runs behind nginx when nginx terminates TLS (a plain http app, as deployed
// behind a proxy).

const SCENARIOS = [
  { name: 'hello', title: 'keep-alive hello', app: 'hello.js' },
  { name: 'close', title: 'Connection: close', app: 'hello.js', load: { close: true } },
  { name: 'body-10k', title: '10 KB response', app: 'sized.js', env: { BODY_BYTES: '10240' } },
  { name: 'body-1m', title: '1 MB response', app: 'sized.js', env: { BODY_BYTES: '1048576' } },
  { name: 'upload-1m', title: '1 MB upload', app: 'upload.js', load: { uploadBytes: 1048576 } },
  { name: 'https', title: 'HTTPS keep-alive', app: 'https-hello.js', nginxApp: 'hello.js', tls: true },
  { name: 'https-close', title: 'HTTPS new connection', app: 'https-hello.js', nginxApp: 'hello.js', tls: true, load: { close: true } },
  { name: 'express', title: 'express hello', app: 'express-hello.js' },
  { name: 'koa', title: 'koa hello', app: 'koa-hello.js' },
  { name: 'fastify', title: 'fastify hello', app: 'fastify-hello.js' },
  // A response the app marks cacheable for 1 s (Cache-Control: public, max-age=1): the
  // router's output cache answers it (docs/output-cache.md), nginx runs with proxy_cache
  // (`cache`), bare node and the cluster make every response.
  { name: 'cached', title: 'cached hello (1 s)', app: 'hello.js', env: { CACHE_CONTROL: 'public, max-age=1' }, cache: true },
  { name: 'cached-10k', title: 'cached 10 KB (1 s)', app: 'sized.js', env: { BODY_BYTES: '10240', CACHE_CONTROL: 'public, max-age=1' }, cache: true },
  // No load: the router's resident memory once it has served a request, then with 40
  // clients that each ask for 1 MB responses (pipelined) and never read them, so what
  // the server holds for them is bounded only by its own budget (issue 25: <= 30 MB
  // idle, <= +100 MB with the 40). bench/lib/memory.js.
  { name: 'memory', title: 'router memory: idle, 40 never-reading clients', app: 'sized.js', env: { BODY_BYTES: '1048576' }, kind: 'memory', targets: ['node', 'httpsys-1', 'unit'] }
]

/** The scenarios named in a comma-separated list (all when empty); unknown names throw. */
function select (only) {
  if (!only) return SCENARIOS
  const names = only.split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n))
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}: one of ${SCENARIOS.map((s) => s.name).join(', ')}`)
  return SCENARIOS.filter((s) => names.includes(s.name))
}

module.exports = { select }
