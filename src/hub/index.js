'use strict'

// The portable router (docs/architecture.md 1, "router" role off Windows). The
// supervisor and a standalone app's preload (src/preload/standalone-hub.js) create a
// Hub; workers reach it through src/queue/hub-client.js.

const { Hub } = require('./hub')

module.exports = { Hub }
