'use strict'

// The CLI: builds the commander program, runs it, and turns errors into what a user
// reads and an exit code: 0 ok, 1 failure (a coded httpsys error, printed on one line),
// 2 usage error (commander's own message). User-facing text is written only here.

const path = require('node:path')
const { Command, CommanderError } = require('commander')
const pkg = require('../../package.json')
const start = require('./start')
const COMMANDS = [start, require('./ls'), require('./reload'), require('./restart'), require('./scale'), require('./stop'), require('./logs'),
  require('./show'), require('./monit'), require('./init'), require('./config'), require('./doctor'), require('./urlacl'), require('./cert'),
  require('./service'),
  require('./vocabulary')]

// httpsys's own frames say nothing to someone whose config file threw
const SRC = path.join(__dirname, '..') + path.sep

const EXAMPLES = `
Examples:
  $ httpsys start app.js                           run app.js; its listen() picks the port
  $ httpsys start app.js -u http://+:8080/ -i max  one instance per CPU behind port 8080
  $ httpsys start                                  run the apps of ./httpsys.config.js
  $ httpsys start -c deploy/httpsys.config.js      run the apps of another config file
  $ httpsys start app.js -- --verbose              arguments after -- go to the app
  $ httpsys ls                                     from another terminal: what runs, memory, requests
  $ httpsys reload api                             new processes, no failed request
  $ httpsys logs api -f                            follow one app's records
  $ httpsys init                                   write a commented httpsys.config.js
  $ httpsys doctor                                 check ports, reservations and certificates for the config
  $ httpsys urlacl add http://+:8080/              (Windows, elevated) let this account register the prefix
  $ httpsys cert add --port 443 --pfx site.pfx     (Windows, elevated) serve site.pfx on port 443

Run \`httpsys <command> --help\` for the options of a command.`

/**
 * @param {object} [deps] what the setup commands work with (src/cli/setup-deps.js);
 *   tests pass a platform and a service configuration over the fake addon
 */
function createProgram (deps) {
  const program = new Command('httpsys')
  program
    .description('Run unmodified node.js apps behind a request queue: several apps on one port by URL prefix, ' +
      'several instances of each, restarted when they crash (HTTP.SYS on Windows, httpsys\'s native router elsewhere).')
    .version(pkg.version, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .helpCommand('help [command]', 'show the help of a command')
    // set before the commands are added: they inherit it
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXAMPLES)
  for (const command of COMMANDS) command.register(program, deps)
  return program
}

/**
 * @param {string[]} argv process.argv
 * @returns {Promise<void>} sets process.exitCode
 */
async function main (argv) {
  // `httpsys --help | head`: a reader that went away is not an error
  process.stdout.on('error', (err) => { if (err.code !== 'EPIPE') throw err })
  const program = createProgram()
  try {
    await program.parseAsync(argv)
  } catch (err) {
    process.exitCode = report(err)
    // what the config still awaits (a socket to a secret store) would keep the process,
    // and so a service manager's restart, waiting for ever
    if (err && err.code === 'ERR_HTTPSYS_CONFIG_TIMEOUT') process.exit(process.exitCode)
  }
}

/** Prints err for a user and returns the exit code. */
function report (err) {
  if (err instanceof CommanderError) {
    // commander printed its message (or the help / version) already
    return err.exitCode === 0 ? 0 : 2
  }
  if (err && typeof err.code === 'string' && err.code.startsWith('ERR_HTTPSYS_')) {
    console.error(`httpsys: ${err.message} (${err.code})`)
    // the user's own config code threw: where is what they need
    if (err.code === 'ERR_HTTPSYS_CONFIG_LOAD' && err.cause && err.cause.stack) {
      const lines = String(err.cause.stack).split('\n')
        .filter((l) => !/^\s+at /.test(l) || !(/\(node:|^\s+at node:|node_modules/.test(l) || l.includes(SRC)))
        .slice(0, 8)
      console.error(lines.map((l) => '  ' + l).join('\n').trimEnd())
    }
    return 1
  }
  console.error(err && err.stack ? err.stack : String(err))
  return 1
}

module.exports = { main, createProgram, report }
