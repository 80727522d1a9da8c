'use strict'

// `npm install` in a checkout (the prepare script): builds the native router for this
// machine into router/bin/httpsys-router (scripts/build-router.js), so
// `httpsys start` runs it straight after (src/supervisor/router-binary.js).
//
// It never fails the install: a checkout without Go still runs everything but
// `httpsys start` off Windows, which says how to get the router (or HTTPSYS_ROUTER=hub,
// the JS hub, while it exists). So:
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
    console.log(`httpsys: the native router is not built: \`go\` is not on PATH (Go ${GO_VERSION} or later, README "Development"); then \`npm run build:router\`. Until then HTTPSYS_ROUTER=hub runs the JS hub.`)
  } else {
    console.log(`httpsys: the native router is not built: ${r.message}\n\`npm run build:router\` tries again; until then HTTPSYS_ROUTER=hub runs the JS hub.`)
  }
}

try {
  main()
} catch (err) {
  console.log(`httpsys: the native router is not built: ${err.message}`)
}
