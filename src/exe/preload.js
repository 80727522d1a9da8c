'use strict'

// The preload as one file, for the user's own node when the single executable starts
// the apps with it (`node --require <cache>/register.js app.js`): src/sea writes it
// out of the executable, with the HTTP.SYS addon next to it.

require('../sea').setBundleDir(__dirname)
require('../register')
