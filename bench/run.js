'use strict'

// `npm run bench`: bare node against httpsys start, one ratio (bench/pair.js).
// `npm run bench -- --matrix`: every scenario against every peer, with charts (bench/matrix.js).
if (process.argv.includes('--matrix')) {
  require('./matrix').run(process.argv.slice(2)).catch((err) => {
    console.error(err.message)
    process.exitCode = 1
  })
} else {
  require('./pair')
}
