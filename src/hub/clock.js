'use strict'

// One coarse clock for every hub in the process: a 1 s tick refreshes "now" and the
// HTTP Date string and runs the registered sweepers (connection timeouts). One
// interval instead of a timer per request or per connection keeps the hot path free
// of timer bookkeeping; timeouts are accurate to a second, which is what they need.

// The tick; now() may be this much behind the real time.
const TICK = 1000

let nowMs = Date.now()
let dateText = new Date(nowMs).toUTCString()
let timer = null
const sweepers = new Set()

function tick () {
  nowMs = Date.now()
  dateText = new Date(nowMs).toUTCString()
  for (const fn of sweepers) fn(nowMs)
}

/** @returns {number} milliseconds, refreshed once a second while a hub runs */
function now () {
  return timer === null ? Date.now() : nowMs
}

/** @returns {string} the current IMF-fixdate for the Date header */
function date () {
  if (timer === null) return new Date().toUTCString()
  return dateText
}

/**
 * A deadline ms from now for the sweepers to compare with now(): never early (now()
 * may be up to a tick old), at most two ticks late.
 * @param {number} ms
 * @returns {number} 0 (no deadline) when ms is 0
 */
function after (ms) {
  return ms > 0 ? now() + ms + TICK : 0
}

/** Runs fn(now) every second until the returned function is called. */
function every (fn) {
  sweepers.add(fn)
  if (timer === null) {
    nowMs = Date.now()
    dateText = new Date(nowMs).toUTCString()
    timer = setInterval(tick, TICK)
    timer.unref()
  }
  return () => {
    sweepers.delete(fn)
    if (sweepers.size === 0 && timer !== null) {
      clearInterval(timer)
      timer = null
    }
  }
}

module.exports = { now, date, after, every, TICK }
