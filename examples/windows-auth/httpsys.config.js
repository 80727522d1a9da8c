'use strict'

// Windows authentication for examples/windows-auth/app.js (README "Windows
// authentication"). Run it with: npx httpsys start -c examples/windows-auth/httpsys.config.js
//
// - schemes: HTTP.SYS does Negotiate (Kerberos in a domain, else NTLM) and NTLM itself;
// - anonymous: false: a request without credentials gets 401 with the challenges and
//   never reaches the app, so every request the app sees has req.windowsIdentity;
// - promote_server_vars: the x-iisnode-* headers an app written for iisnode reads;
// - dev_identity: the stand-in on the hub (Linux, macOS), so the app runs on a laptop.
//   It is not authentication, and HTTP.SYS ignores it.
//
// HTTPSYS_EXAMPLE_PORT and HTTPSYS_EXAMPLE_HOST move it (the tests run it on a free port
// on 127.0.0.1). On Windows a prefix on a port other than localhost's needs a URL
// reservation once: `httpsys start --setup` from an elevated prompt makes it.

const port = process.env.HTTPSYS_EXAMPLE_PORT || 8080
const host = process.env.HTTPSYS_EXAMPLE_HOST || '+'

module.exports = {
  apps: [
    {
      name: 'intranet',
      script: 'app.js',
      urls: [`http://${host}:${port}/`],
      auth: {
        schemes: ['negotiate', 'ntlm'],
        anonymous: false,
        dev_identity: { user: 'DEV\\alice', groups: ['DEV\\Staff', { name: 'BUILTIN\\Administrators', sid: 'S-1-5-32-544' }] }
      },
      promote_server_vars: ['AUTH_USER', 'AUTH_TYPE', 'LOGON_USER']
    }
  ]
}
