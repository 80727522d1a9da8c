'use strict'

// The portable router (architecture.md, "router" role off Windows). The supervisor and
// the standalone queue backend (src/queue/index.js) create a Hub; workers reach it
// through src/queue/hub-client.js.

const { Hub } = require('./hub')

module.exports = { Hub }
