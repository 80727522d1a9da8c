'use strict'

// Commands users bring from pm2 and other supervisors: `version`, and the pm2 words
// that have another name here, each answered with the command to use (exit 2: a usage
// error, as an unknown command is).

const pkg = require('../../package.json')

const PM2_WORDS = {
  delete: 'httpsys stop <app> (an app is defined by the config file: remove it there)',
  kill: 'httpsys stop all',
  save: 'httpsys service install (the config file is what runs: nothing to save)',
  startup: 'httpsys service install',
  resurrect: 'httpsys start -d (or a service: httpsys service install)',
  flush: 'log files rotate by themselves (log_max_size, log_daily); delete them in the app\'s log_dir',
  env: 'httpsys show <app> (its env, secrets masked)'
}

function register (program) {
  program.command('version')
    .summary('print the version')
    .description('Print the version of httpsys (also: httpsys --version).')
    .action(() => { console.log(pkg.version) })
  for (const [word, instead] of Object.entries(PM2_WORDS)) {
    program.command(word, { hidden: true })
      .allowUnknownOption()
      .argument('[args...]')
      .action(() => {
        console.error(`httpsys: \`${word}\` is pm2's; here: ${instead}`)
        process.exitCode = 2
      })
  }
}

module.exports = { register, PM2_WORDS }
