'use strict'

// Registers the contract suite (suite.js) with jest for one environment factory. A test
// the environment cannot show (a missing feature) is registered as skipped, with the
// feature in its name, so it is visible rather than silently passing.

const { contractTests } = require('./suite')

/**
 * @param {string} title
 * @param {() => Promise<object>} makeEnv a fresh environment per test
 */
function runContract (title, makeEnv) {
  describe(`request-queue contract: ${title}`, () => {
    let env = null
    afterEach(async () => {
      if (env !== null) await env.cleanup()
      env = null
    })
    for (const t of contractTests()) {
      const run = async () => {
        env = await makeEnv()
        if (t.needs && !env.features[t.needs]) return
        await t.fn(env)
      }
      test(t.name, run)
    }
  })
}

module.exports = { runContract }
