'use strict'

// A JSON API. It knows nothing about prefixes: under httpsys it receives only the
// requests under /api/, from whichever of its instances the router picks.

const http = require('node:http')

const instance = process.env.HTTPSYS_INSTANCE || '0'

const routes = {
  '/api/hello': () => ({ message: 'hello from the api' }),
  '/api/time': () => ({ now: new Date().toISOString() })
}

const server = http.createServer((req, res) => {
  const { pathname } = new URL(req.url, 'http://localhost')
  const route = routes[pathname]
  const body = route
    ? { ...route(), app: 'api', pid: process.pid, instance }
    : { error: 'not found', path: pathname, app: 'api', pid: process.pid, instance }
  res.writeHead(route ? 200 : 404, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body) + '\n')
})

server.listen(Number(process.env.PORT) || 8080, () => {
  console.log(`api instance ${instance} ready (pid ${process.pid})`)
})
