'use strict'

// Registers the contract suite (suite.js) with jest for one environment factory. A test
// the environment cannot show (a missing feature) is registered as skipped, with the
// feature in its name, so it is visible rather than silently passing.

const { contractTests } = require('./suite')

/**
 * @param {string} title
 * @param {object} features what the environment can show (suite.js), known before any
 *   environment is made so that a test needing a missing one is registered as skipped
 * @param {() => Promise<object>} makeEnv a fresh environment per test (its features are these)
 */
function runContract (title, features, makeEnv) {
  describe(`request-queue contract: ${title}`, () => {
    let env = null
    afterEach(async () => {
      if (env !== null) await env.cleanup()
      env = null
    })
    for (const t of contractTests()) {
      const run = async () => {
        env = await makeEnv()
        env.features = features
        await t.fn(env)
      }
      if (t.needs && !features[t.needs]) test.skip(`${t.name} (needs ${t.needs})`, run)
      else test(t.name, run)
    }
  })
}

module.exports = { runContract }
