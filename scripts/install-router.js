'use strict'

// `npm install` in a checkout (the prepare script): builds the native router for this
// machine into router/bin/httpsys-router (scripts/build-router.js), so
// `httpsys start` runs it straight after (src/supervisor/router-binary.js).
//
// It never fails the install: a checkout without Go still runs everything but the
// router (`httpsys start` on the hub backend, standalone apps), which say how to get
// it (ERR_HTTPSYS_ROUTER_MISSING). So:
//   - no router/ (an installed package: npm runs prepare only in a checkout, but a git
//     dependency or a copy may run it anywhere): nothing, silently;
//   - router/ but no `go`: one line saying the router is not built and why;
//   - a failing build: go's own output, and one line saying so.
// Binaries are never committed (router/.gitignore).

const fs = require('node:fs')
const path = require('node:path')
const { buildRouter, checkoutBinary, GO_VERSION } = require('./build-router')

const ROOT = path.join(__dirname, '..')

function main () {
  if (!fs.existsSync(path.join(ROOT, 'router', 'go.mod'))) return
  const out = checkoutBinary()
  const r = buildRouter({ out, stdio: 'pipe' })
  if (r.ok) {
    console.log(`httpsys: built the native router for ${process.platform}-${process.arch}: ${path.relative(ROOT, out)}`)
  } else if (r.noGo) {
    console.log(`httpsys: the native router is not built: \`go\` is not on PATH (Go ${GO_VERSION} or later, README "Development"); then \`npm run build:router\`.`)
  } else {
    console.log(`httpsys: the native router is not built: ${r.message}\n\`npm run build:router\` tries again.`)
  }
}

try {
  main()
} catch (err) {
  console.log(`httpsys: the native router is not built: ${err.message}`)
}
