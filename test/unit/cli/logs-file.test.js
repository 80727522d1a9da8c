'use strict'

// `httpsys logs --pretty` and `--file` (issue 28): piped output and log_dir files are
// NDJSON; these give the form a terminal shows, from a pipe, a file or stdin.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const BIN = path.join(__dirname, '..', '..', '..', 'bin', 'httpsys')
let dir
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-logs-file-'))
  const t = Date.UTC(2026, 0, 2, 3, 4, 5, 678)
  fs.writeFileSync(path.join(dir, 'api.log'), [
    { level: 30, time: t, app: 'api', inst: 0, pid: 11, stream: 'stdout', msg: 'listening on 3000' },
    { level: 50, time: t + 1, app: 'web', inst: 1, pid: 12, stream: 'stderr', msg: 'boom' },
    { level: 30, time: t + 2, app: 'api', inst: 0, pid: 11, event: 'ready', ms: 40, msg: 'ready in 40 ms' }
  ].map((r) => JSON.stringify(r)).join('\n') + '\n')
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

// piped, as in a script or `| less`; the clock of the pretty form is the machine's zone
const run = (args, input) => spawnSync(process.execPath, [BIN, 'logs', ...args], {
  cwd: dir, input, encoding: 'utf8', env: { ...process.env, TZ: 'UTC', NO_COLOR: '1', HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
})

test('--file reads an NDJSON file: JSON lines when piped, the terminal\'s form with --pretty; an app and -n filter', () => {
  const json = run(['--file', 'api.log'])
  expect(json.status).toBe(0)
  expect(json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).msg)).toEqual(['listening on 3000', 'boom', 'ready in 40 ms'])
  const pretty = run(['--file', 'api.log', '--pretty'])
  expect(pretty.stdout).toBe([
    '[03:04:05.678] INFO: api#0 | listening on 3000',
    '[03:04:05.679] ERROR: web#1 | boom',
    '[03:04:05.680] INFO: api#0 | ready in 40 ms',
    ''
  ].join('\n'))
  expect(run(['api', '--file', 'api.log', '-n', '1', '--pretty']).stdout).toBe('[03:04:05.680] INFO: api#0 | ready in 40 ms\n')
})

test('--file - reads stdin, e.g. what `httpsys start` wrote to a pipe', () => {
  const r = run(['--file', '-', '--pretty', 'web'], fs.readFileSync(path.join(dir, 'api.log')))
  expect(r).toMatchObject({ status: 0, stdout: '[03:04:05.679] ERROR: web#1 | boom\n' })
})

test('usage mistakes: both forms at once, a file that is not there', () => {
  expect(run(['--json', '--pretty'])).toMatchObject({ status: 2, stderr: expect.stringContaining('--json and --pretty ask for two forms of the records: choose one') })
  expect(run(['--file', 'nope.log'])).toMatchObject({ status: 2, stderr: expect.stringContaining('cannot read nope.log (ENOENT)') })
})
