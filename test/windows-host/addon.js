'use strict'

// The addon this run uses, as the loader found it (run.js loads it before any check:
// whether it runs under Wine decides which checks can run): what it reports of the
// HTTP Server API must be what the rest of the run relies on.

const assert = require('node:assert/strict')

module.exports = {
  group: 'addon',
  checks: [
    {
      name: 'the addon loads through src/httpsys/loader.js and finds the HTTP Server API calls it needs',
      async run (t) {
        const { platform, addonPath } = t.host
        t.note(`${addonPath}; ${platform.wine ? `Wine ${platform.wine}` : `Windows build ${t.host.windowsBuild()}`}`)
        const f = platform.features
        if (platform.wine) {
          // the calls Wine only stubs are never made there (docs/wine.md 1)
          for (const name of ['streaming', 'cancel', 'queueProperties']) assert.equal(f[name], false, `${name} must be off under Wine`)
          return
        }
        const missing = ['streaming', 'cancel', 'disconnect', 'queueProperties', 'flushCache'].filter((name) => f[name] !== true)
        assert.deepEqual(missing, [], `platform().features lacks ${missing.join(', ')}: ${JSON.stringify(f)}`)
      }
    }
  ]
}
