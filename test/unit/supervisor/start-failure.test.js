'use strict'

// The one-line cause of a first start that failed, from the stderr a user would
// otherwise read ten times over.

const { startFailureCause } = require('../../../src/supervisor/start-failure')

const ctx = { cwd: '/srv/app', code: 1, signal: null }

test.each([
  [['node:internal/modules/cjs/loader:1143', '  throw err;', '  ^', '', "Error: Cannot find module 'express'", 'Require stack:', '- /srv/app/app.js'],
    "Cannot find module 'express': run `npm install` in /srv/app"],
  [["Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'koa' imported from /srv/app/app.mjs"], "Cannot find module 'koa': run `npm install` in /srv/app"],
  [["Error: Cannot find module './routes'"], "Cannot find module './routes': the file is missing"],
  [['httpsys: Port 8080 is already in use by pid 4242 (httpsys supervisor in /home/u/other). ...'],
    'its port is held by another httpsys supervisor, pid 4242 (httpsys supervisor in /home/u/other): put both apps in one config, or use another port'],
  [['Error: Port 8080 is already in use by pid 77 (nginx: master process). Stop that process'], 'its port is held by pid 77 (nginx: master process): stop that program or use another port'],
  [['Error: listen EADDRINUSE: address already in use :::3000'], "port 3000 is already in use: stop what holds it (`ss -ltnp 'sport = :3000'`) or use another port"],
  [['/srv/app/app.js:3', 'const x = ;', '          ^', '', 'SyntaxError: Unexpected token \';\''], "SyntaxError: Unexpected token ';' (/srv/app/app.js:3)"],
  [['    at Object.<anonymous> (/srv/app/app.js:1:7)', 'TypeError: Cannot read properties of undefined (reading \'x\')'], "TypeError: Cannot read properties of undefined (reading 'x')"],
  [['something went wrong here', ''], 'something went wrong here'],
  [[], 'exited with code 1']
])('%j -> %s', (lines, cause) => {
  expect(startFailureCause(lines, ctx)).toBe(cause)
})
