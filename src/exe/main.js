'use strict'

// The single executable's entry point (scripts/build-exe.js bundles from here). It is
// two programs in one file:
//   - the CLI, as bin/httpsys: `httpsys start app.js`, `httpsys ls`, ...;
//   - node, when the supervisor starts a worker as the executable itself (the env
//     variable NODE_MODE_ENV, docs/single-executable.md 3): `<exe> [--require m]...
//     script args` runs the script as `node --require httpsys-cli/register script args`
//     would, with the preload from this bundle. The variable stays in the app's
//     environment, so its own fork() children and cluster workers are node too, and
//     get the preload as they would through execArgv.

const path = require('node:path')
const Module = require('node:module')
const sea = require('../sea')

sea.setBundleDir(__dirname)

if (process.env[sea.NODE_MODE_ENV] === '1') runNode(process.argv.slice(2))
else runCli(process.argv.slice())

function runCli (argv) {
  // the daemon starts the executable again as `<exe> <exe> start ...` (src/cli/start.js)
  if (argv[2] === process.execPath) argv.splice(2, 1)
  require('../cli').main(argv)
}

function runNode (args) {
  const requires = []
  let i = 0
  for (; i < args.length; i++) {
    const arg = args[i]
    if (arg === '--require' || arg === '-r') requires.push(args[++i])
    else if (arg.startsWith('--require=')) requires.push(arg.slice('--require='.length))
    else if (arg === '--') { i++; break } else if (arg.startsWith('-')) {
      // node read its options before this code ran: one here would be silently ignored
      process.stderr.write(`httpsys (as node): ${arg} is not read from the command line here; put node options in NODE_OPTIONS\n`)
      process.exit(9)
    } else break
  }
  if (i >= args.length) {
    process.stderr.write('httpsys (as node): no script to run\n')
    process.exit(9)
  }
  const main = path.resolve(args[i])
  process.argv = [process.execPath, main, ...args.slice(i + 1)]
  require('../register')
  const fromCwd = Module.createRequire(path.join(process.cwd(), '[node-mode]'))
  for (const id of requires) if (id !== sea.PRELOAD_ID) fromCwd(id)
  // node's own entry point: CommonJS or ESM as the file and its package.json say
  Module.runMain(main)
}
