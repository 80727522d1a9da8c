'use strict'

// The site: every request not under /api/ lands here.

const http = require('node:http')

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>httpsys: two apps, one port</title></head>
<body>
  <h1>Two apps, one port</h1>
  <p>This page comes from the <code>web</code> app. <a href="/api/hello">/api/hello</a> is answered by the <code>api</code> app.</p>
  <p id="api">Asking the api...</p>
  <script>
    fetch('/api/hello').then((r) => r.json()).then((data) => {
      document.getElementById('api').textContent = 'api instance ' + data.instance + ' (pid ' + data.pid + ') says: ' + data.message
    })
  </script>
</body>
</html>
`

const server = http.createServer((req, res) => {
  const { pathname } = new URL(req.url, 'http://localhost')
  if (pathname !== '/') {
    res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>Not found</title><h1>Not found</h1>\n')
    return
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
  res.end(page)
})

server.listen(Number(process.env.PORT) || 8080, () => {
  console.log(`web ready (pid ${process.pid})`)
})
