'use strict'

// An intranet app with Windows sign-in: HTTP.SYS authenticates the user (Negotiate,
// which is Kerberos in a domain, or NTLM), and the app only reads who it is. No
// passport, no node-expose-sspi, no password ever reaches node. README "Windows
// authentication" says what req.windowsIdentity holds; httpsys.config.js turns it on.
//
// It uses express from the repository root: run `npm install` at the root first. Then:
//   npx httpsys start -c examples/windows-auth/httpsys.config.js
// On Windows, open http://<this machine's name>:8080/ in Edge or Chrome: no prompt on a
// domain machine (the intranet zone signs in by itself), your name and groups. On Linux
// and macOS the same app runs with the config's development identity (not sign-in).

const express = require('express')

// a group by SID means the same in every Windows language: S-1-5-32-544 is
// BUILTIN\Administrators (ADMIN_GROUP: a name such as CONTOSO\IT-Admins works too)
const ADMIN_GROUP = process.env.ADMIN_GROUP || 'S-1-5-32-544'

const app = express()

app.get('/', (req, res) => {
  const me = req.windowsIdentity
  res.type('text').send(`Hello ${me.name} (${me.scheme})\n`)
})

// who you are, and every group the token holds (names looked up once, then cached)
app.get('/me', (req, res) => {
  const me = req.windowsIdentity
  res.json({ ...me.toJSON(), groups: me.groups })
})

// a route for one group only: a 403, not a 401 (the user signed in; they may not enter)
app.get('/admin', requireRole(ADMIN_GROUP), (req, res) => {
  res.json({ admin: req.windowsIdentity.name })
})

// with `anonymous: true` in the config, requests without credentials reach the app
// (req.windowsIdentity null): a route can ask for sign-in itself with a 401, and httpsys
// adds the WWW-Authenticate challenges of the configured schemes to it
app.get('/signin', (req, res) => {
  if (!req.windowsIdentity) return res.status(401).send('Sign in, please.\n')
  res.redirect(303, '/')
})

app.use((req, res) => res.status(404).json({ error: 'not found' }))

function requireRole (role) {
  return (req, res, next) => {
    const me = req.windowsIdentity
    if (!me) return res.status(401).send('Sign in, please.\n')
    if (!me.isInRole(role)) return res.status(403).json({ error: `${me.name} is not in ${role}` })
    next()
  }
}

const port = Number(process.env.PORT) || 8080
app.listen(port, () => console.log(`windows-auth example on port ${port}`))
