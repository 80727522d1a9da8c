'use strict'

// Waiting for log records (pino records collected into an array by a test's logger).

/**
 * Resolves with the records matching `predicate` once there are at least `count`.
 * @param {object[]} records grows while the test runs
 * @param {(record: object) => boolean} predicate
 * @param {{ timeout?: number, count?: number }} [options]
 */
async function waitForRecords (records, predicate, { timeout = 5000, count = 1 } = {}) {
  const end = Date.now() + timeout
  while (Date.now() < end) {
    const found = records.filter(predicate)
    if (found.length >= count) return found
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no ${count} matching record(s) in ${timeout} ms; got:\n${records.map((r) => JSON.stringify(r)).join('\n')}`)
}

/** The first record matching `predicate`, waiting for it. */
async function waitForRecord (records, predicate, options) {
  return (await waitForRecords(records, predicate, options))[0]
}

/**
 * The JSON records in a supervisor's output (`httpsys start --json`, or pino's JSON when
 * its stdout is a file); other lines are skipped.
 * @param {string} text
 * @returns {object[]}
 */
function parseRecords (text) {
  const out = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue
    try { out.push(JSON.parse(line)) } catch {}
  }
  return out
}

module.exports = { waitForRecords, waitForRecord, parseRecords }
