'use strict'

// The app of the Windows authentication checks (test/windows-host/auth.js): what
// req.windowsIdentity says, as JSON, and how many requests reached it.
//
//   .../whoami     { identity (toJSON()), groups, inRole (AUTH_APP_ROLE), promoted (x-iisnode-*), n }
//   .../count      { n }: requests that reached the app
//   .../handles    { pid }: the worker, whose handle count the check reads
//
// AUTH_APP_HTTPS=1 makes it an https server (the port's binding serves).

const http = require('node:http')
const https = require('node:https')

let n = 0

function handler (req, res) {
  n++
  const last = req.url.split('?')[0].split('/').filter(Boolean).pop() || ''
  const id = req.windowsIdentity
  const value = last === 'count'
    ? { n: n - 1 }
    : last === 'handles'
      ? { pid: process.pid }
      : {
          identity: id && id.toJSON(),
          groups: id && id.groups,
          inRole: id && process.env.AUTH_APP_ROLE ? id.isInRole(process.env.AUTH_APP_ROLE) : null,
          promoted: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-iisnode-'))),
          n
        }
  const body = JSON.stringify(value)
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
}

const server = process.env.AUTH_APP_HTTPS === '1' ? https.createServer({}, handler) : http.createServer(handler)
server.listen(Number(process.env.PORT) || 0)
