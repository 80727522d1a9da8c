'use strict'

// The runner's machinery, apart from anything Windows: checks run one at a time in the
// order given, each printed as one line (ok / FAIL / skip), then `N skipped` and
// `N passed, N failed`. What a check creates is undone by cleanups it registers, in
// three scopes: the check's own run when it ends (pass or fail), its group's when the
// group's last check has run (a supervisor its checks share), the run's at the end (a
// certificate binding several groups use); all of them, newest first, on
// SIGINT/SIGTERM/SIGBREAK or an exit nobody planned. Cleanups are synchronous
// (spawnSync) so that they also run from process.on('exit').

const kSkip = Symbol('httpsys.windows-host.skip')

class Skip extends Error {
  constructor (reason) {
    super(reason)
    this.name = 'Skip'
    this[kSkip] = true
  }
}

/** A cleanup stack: LIFO, each entry run once, a failure reported and the rest still run. */
class Cleanups {
  constructor () {
    this.stack = []
  }

  /**
   * @param {string} what what is undone ("delete the URL reservation http://+:8080/x/")
   * @param {() => void} fn synchronous; throws when it could not undo it
   */
  add (what, fn) {
    const entry = { what, fn, done: false }
    this.stack.push(entry)
    return entry
  }

  get size () {
    return this.stack.filter((e) => !e.done).length
  }

  /** Runs every pending entry, newest first. @returns {{what: string, error: Error}[]} the failures */
  runAll () {
    const failures = []
    while (this.stack.length > 0) {
      const entry = this.stack.pop()
      if (entry.done) continue
      entry.done = true
      try {
        entry.fn()
      } catch (error) {
        failures.push({ what: entry.what, error })
      }
    }
    return failures
  }
}

/**
 * @param {object} options
 * @param {(line: string) => void} options.print one output line
 * @param {string|null} options.wine the Wine version, or null on Windows: a check with
 *   a `wine` reason is reported as skipped there without running
 * @param {object} options.context what every check gets as `t.host` (lib/host.js)
 * @param {RegExp|null} [options.only] runs only the checks whose "group: name" matches
 */
function createHarness ({ print, wine, context, only = null }) {
  const runCleanups = new Cleanups()
  let groupCleanups = null
  let checkCleanups = null
  const counts = { passed: 0, failed: 0, skipped: 0 }
  let n = 0
  let finished = false

  function reportCleanupFailures (failures) {
    for (const { what, error } of failures) {
      counts.failed++
      print(`FAIL    cleanup: could not ${what}`)
      detail(error)
    }
  }

  function detail (error) {
    const text = error && error.stack && !error.expected ? error.stack : String(error && error.message ? error.message : error)
    // node's own frames say nothing about the check
    for (const line of text.split('\n').filter((l) => !/\(node:|at node:/.test(l))) print(`        ${line}`)
  }

  /**
   * @param {{group: string, checks: object[]}[]} groups each check: { name, run(t),
   *   wine?: reason it cannot run under Wine, timeout?: ms (default 120 s) }
   */
  async function run (groups) {
    for (const { group, checks } of groups) {
      groupCleanups = new Cleanups()
      const shared = {} // what a group's checks hand on to the next ones
      for (const check of checks) {
        const title = `${group}: ${check.name}`
        if (only && !only.test(title)) continue
        n++
        const label = String(n).padStart(2)
        if (wine && check.wine) {
          counts.skipped++
          print(`skip ${label} ${title}: skipped: ${check.wine}`)
          continue
        }
        checkCleanups = new Cleanups()
        const notes = []
        const t = {
          host: context,
          wine,
          /** undone when this check ends, pass or fail */
          cleanup: (what, fn) => checkCleanups.add(what, fn),
          /** undone after the group's last check */
          cleanupAfterGroup: (what, fn) => groupCleanups.add(what, fn),
          shared,
          /** undone at the end of the run (a resource later checks share) */
          cleanupAtEnd: (what, fn) => runCleanups.add(what, fn),
          skip: (reason) => { throw new Skip(reason) },
          note: (text) => notes.push(text)
        }
        const started = Date.now()
        let outcome
        try {
          await within(Promise.resolve().then(() => check.run(t)), check.timeout || 120000, title)
          outcome = null
        } catch (err) {
          outcome = err
        }
        const failures = checkCleanups.runAll()
        checkCleanups = null
        const ms = Date.now() - started
        if (outcome && outcome[kSkip]) {
          counts.skipped++
          print(`skip ${label} ${title}: skipped: ${outcome.message}`)
        } else if (outcome) {
          counts.failed++
          print(`FAIL ${label} ${title} (${ms} ms)`)
          detail(outcome)
        } else {
          counts.passed++
          print(`ok   ${label} ${title} (${ms} ms)`)
        }
        for (const text of notes) print(`        note: ${text}`)
        reportCleanupFailures(failures)
      }
      reportCleanupFailures(groupCleanups.runAll())
      groupCleanups = null
    }
    return finish()
  }

  /** Runs what is left to undo and prints the summary once. */
  function finish () {
    if (finished) return counts
    finished = true
    for (const scope of [checkCleanups, groupCleanups, runCleanups]) {
      if (scope) reportCleanupFailures(scope.runAll())
    }
    print(`${counts.skipped} skipped`)
    print(`${counts.passed} passed, ${counts.failed} failed`)
    return counts
  }

  /** An interrupted run (SIGINT): the check in progress counts as failed, then cleanup. */
  function interrupt (why) {
    if (finished) return counts
    if (checkCleanups) {
      counts.failed++
      print(`FAIL    interrupted (${why}): the check in progress did not finish`)
    }
    return finish()
  }

  return { run, finish, interrupt, counts, cleanupAtEnd: (what, fn) => runCleanups.add(what, fn) }
}

/** `promise`, or a rejection naming `what` after `ms`; the timer never outlives the race. */
function within (promise, ms, what) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(expected(`${what}: no result within ${Math.round(ms / 1000)} s`)), ms)
    timer.unref() // what the check waits on keeps the process alive, not this
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** An error whose message says it all: printed without its stack. */
function expected (message) {
  const err = new Error(message)
  err.expected = true
  return err
}

module.exports = { createHarness, Cleanups, Skip, expected, within }
