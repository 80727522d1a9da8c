'use strict'

// Parser bugs the fuzzer found, left for the parser's owner (src/ is not changed by the
// fuzz work). Each has a minimal repro, pinned by a test.failing in
// test/unit/hub/http-parser-fuzz.test.js, and a matcher that lets the fuzz loop count
// the bug instead of stopping on it, so that the long run can look for other bugs.
// When a bug is fixed: its test.failing starts failing (jest reports it), then delete
// the entry here and turn the test into a plain test.

// The three found so far (a limit status that depended on where a read was cut, a
// Content-Length misread near 2^53, a pending line copied whole) are fixed; their
// regression tests are in test/unit/hub/http-parser-fuzz.test.js.
const KNOWN_BUGS = []

module.exports = { KNOWN_BUGS }
