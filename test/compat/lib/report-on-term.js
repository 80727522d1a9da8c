'use strict'

// Loaded (--require) into every node test process: when the harness's timeout sends
// SIGTERM, exit through process.exit() so that test/common's exit checks run and print
// which mustCall()s never happened (they run only for exit code 0; the harness counts
// the run as a timeout whatever the code). That line is what the TSV shows for a timeout.
process.once('SIGTERM', () => {
  process.exit(0)
})
