'use strict'

// Two apps on one port, routed by URL prefix (the longest matching prefix wins):
//   http://localhost:8080/api/...  -> "api", two processes sharing one request queue
//   http://localhost:8080/...      -> "web"
// Run it with: npx httpsys start -c examples/two-apps/httpsys.config.js
//
// HTTPSYS_EXAMPLE_PORT and HTTPSYS_EXAMPLE_HOST move it (the tests run it on a free port
// on 127.0.0.1). "+" is the strong wildcard: any host name, every interface.

const port = process.env.HTTPSYS_EXAMPLE_PORT || 8080
const host = process.env.HTTPSYS_EXAMPLE_HOST || '+'

module.exports = {
  apps: [
    {
      name: 'api',
      script: 'api.js',
      urls: [`http://${host}:${port}/api/`],
      instances: 2,
      env: { NODE_ENV: 'production' }
    },
    {
      name: 'web',
      script: 'web.js',
      urls: [`http://${host}:${port}/`]
    }
  ]
}
