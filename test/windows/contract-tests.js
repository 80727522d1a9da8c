'use strict'

// Registers one Wine test per request-queue contract test (test/contract/suite.js):
// the first runs the whole suite once in node.exe (fixtures/contract-runner.js), each
// then checks its own line. One the suite skipped (a Wine limit) is reported skipped.

const assert = require('node:assert/strict')
const { contractTests } = require('../contract/suite')

function register (test, { W }) {
  let run = null
  const results = () => {
    if (run === null) {
      run = (async () => {
        const port = await W.freePort()
        const { code, output } = await W.runNode('contract', ['test/windows/fixtures/contract-runner.js'], { env: { HTTPSYS_WINE_PORT: String(port) } }, 600000)
        const lines = new Map()
        for (const m of output.matchAll(/^CONTRACT (ok|not ok|skip) ([^\t\n]*)(?:\t(.*))?$/gm)) {
          lines.set(m[2], { verdict: m[1], detail: m[3] ? JSON.parse(m[3]) : '' })
        }
        return { code, output, lines, done: /^CONTRACT DONE$/m.test(output) }
      })()
    }
    return run
  }
  for (const t of contractTests()) {
    // the first one waits for the whole suite's run
    test(`contract (real addon): ${t.name}`, async () => {
      const r = await results()
      const line = r.lines.get(t.name)
      assert.ok(line, `no result for this test (exit ${r.code}):\n${W.tail(r.output)}`)
      assert.notEqual(line.verdict, 'not ok', line.detail)
      if (line.verdict === 'skip') W.skip(line.detail || 'a Wine limit')
    }, { timeout: 600000 })
  }
}

module.exports = { register }
