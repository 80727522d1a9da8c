'use strict'

// `httpsys urlacl add|delete|list`: URL reservations for HTTP.SYS (src/setup/urlacl.js).

const { setupDeps, notHere } = require('./setup-deps')
const { table } = require('./format')

function register (program, deps) {
  const d = setupDeps(deps)
  const urlacl = program.command('urlacl')
    .summary('reserve URL prefixes for an account (Windows, HTTP.SYS)')
    .description('URL reservations let an account that is not an administrator register URL prefixes with HTTP.SYS ' +
      '(what `netsh http add urlacl` does). Changes need an elevated prompt. On Linux and macOS there is nothing to reserve.')
  urlacl.command('add <prefix>')
    .summary('reserve a prefix (default: for the current user)')
    .description('Reserve a URL prefix such as http://+:8080/ for an account. Adding the same reservation again changes nothing; ' +
      'a reservation of the prefix for another account is reported with the commands that change it.')
    .option('--user <account>', 'DOMAIN\\user, a group, or a SID (default: the current user)')
    .option('--sddl <descriptor>', 'a whole security descriptor instead of --user, e.g. "D:(A;;GX;;;S-1-1-0)"')
    .option('--json', 'print JSON (for scripts)')
    .action((prefix, options) => add(d, prefix, options))
  urlacl.command('delete <prefix>')
    .alias('rm')
    .summary('delete the reservation of a prefix')
    .description('Delete the URL reservation of a prefix (elevated). A prefix with no reservation: nothing to do.')
    .option('--json', 'print JSON (for scripts)')
    .action((prefix, options) => remove(d, prefix, options))
  urlacl.command('list')
    .alias('ls')
    .summary('list the reservations of this machine')
    .description('List the URL reservations of this machine and the accounts each one is for.')
    .option('--prefix <prefix>', 'only this prefix')
    .option('--json', 'print JSON (for scripts)')
    .action((options) => list(d, options))
}

function library (d) {
  const { createUrlAcl } = require('../setup/urlacl')
  return createUrlAcl(d.serviceConfig())
}

function add (d, prefix, options) {
  prefix = require('../urlprefix').parse(prefix).prefix // a typo is an error everywhere
  if (!d.windows) return d.out(options.json ? JSON.stringify({ prefix, result: 'not-needed' }) + '\n' : notHere('A URL reservation'))
  const r = library(d).add(prefix, { user: options.user, sddl: options.sddl })
  if (options.json) return d.out(JSON.stringify(r, null, 2) + '\n')
  const who = accounts(r.users)
  d.out(r.result === 'added' ? `reserved ${r.prefix} for ${who}\n` : `${r.prefix} is already reserved for ${who}: nothing changed\n`)
}

function remove (d, prefix, options) {
  prefix = require('../urlprefix').parse(prefix).prefix
  if (!d.windows) return d.out(options.json ? JSON.stringify({ prefix, deleted: false }) + '\n' : notHere('A URL reservation'))
  const r = library(d).delete(prefix)
  if (options.json) return d.out(JSON.stringify(r) + '\n')
  d.out(r.deleted ? `deleted the reservation of ${r.prefix}\n` : `${r.prefix} is not reserved: nothing to delete\n`)
}

function list (d, options) {
  if (!d.windows) return d.out(options.json ? '[]\n' : notHere('A URL reservation'))
  const records = library(d).list({ prefix: options.prefix })
  if (options.json) return d.out(JSON.stringify(records, null, 2) + '\n')
  d.out(formatList(records))
}

function accounts (users) {
  return users.map((u) => `${u.account || u.sid} (${u.rights.join(', ') || 'no rights'})`).join(', ') || 'nobody'
}

/** The reservations as a table a person reads. */
function formatList (records) {
  if (records.length === 0) return 'no URL reservations\n'
  const rows = [['prefix', 'accounts (rights)']]
  for (const r of records) rows.push([r.prefix, accounts(r.users)])
  return table(rows) + '\n'
}

module.exports = { register, formatList }
