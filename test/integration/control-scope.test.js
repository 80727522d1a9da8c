'use strict'

// Control commands act on the current project's supervisor, never on another
// project's: two projects with their own configs and an app of the same name (`app`),
// and a third started from a script. A restart, reload or stop in one folder never
// touches the other; --all-supervisors does, and every result line names the
// supervisor it came from.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, waitUntil, alive, APPS } = require('../fixtures/apps/harness')

let base
const runs = []
beforeEach(() => { base = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-scope-')) })
afterEach(async () => {
  for (const run of runs.splice(0)) await run.cleanup()
  fs.rmSync(base, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(base, 'run') })

async function project (name) {
  const dir = path.join(base, name)
  fs.mkdirSync(dir)
  const port = await freePort()
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'),
    `module.exports = { apps: [{ name: 'app', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'] }] }\n`)
  const run = start([], { env: env(), cwd: dir })
  runs.push(run)
  const ready = await run.waitFor((r) => r.event === 'ready')
  return { dir, port, run, pid: ready.pid }
}

test('two projects with same-named apps: commands in one never touch the other; --all-supervisors does', async () => {
  const a = await project('a')
  const b = await project('b')
  const scriptDir = path.join(base, 'c')
  fs.mkdirSync(scriptDir)
  const cPort = await freePort()
  const c = start([path.join(APPS, 'pid-server.js'), '-n', 'app', '-u', `http://127.0.0.1:${cPort}/`], { env: env(), cwd: scriptDir })
  runs.push(c)
  await c.waitFor((r) => r.event === 'ready')

  // restart in a: only a's app gets a new process
  const restart = await cli(['restart', 'app'], { env: env(), cwd: a.dir })
  expect(restart).toMatchObject({ code: 0, stdout: 'app [httpsys.config.js]: restarted\n' })
  await a.run.waitFor((r) => r.event === 'ready', { count: 2 })
  expect(JSON.parse((await get(a.port, '/')).body).pid).not.toBe(a.pid)
  expect(JSON.parse((await get(b.port, '/')).body).pid).toBe(b.pid)

  // ls in b lists b only; with no project in the folder (base), every supervisor, grouped
  const lsB = JSON.parse((await cli(['ls', '--json'], { env: env(), cwd: b.dir })).stdout)
  expect(lsB.map((s) => s.config)).toEqual([path.join(b.dir, 'httpsys.config.js')])
  const lsAll = await cli(['ls'], { env: env(), cwd: base })
  // (the hub backend is the native router)
  const router = 'native router'
  expect(lsAll.stdout.match(new RegExp(`^supervisor [0-9a-f]{12} \\(pid \\d+, ${router}\\): .*$`, 'gm'))).toHaveLength(3)

  // the script-started one is this folder's supervisor in its own folder
  const reloadC = await cli(['reload', 'app'], { env: env(), cwd: scriptDir })
  expect(reloadC.code).toBe(0)
  expect(reloadC.stdout).toMatch(/^app \[.*pid-server\.js\]: reloaded in \d+ ms/)
  // ... and leaves a's and b's processes alone
  expect(JSON.parse((await get(b.port, '/')).body).pid).toBe(b.pid)
  const cId = lsAll.stdout.match(new RegExp(`^supervisor ([0-9a-f]{12}) \\(pid (\\d+), ${router}\\): (.*)$`, 'gm'))
    .map((line) => /^supervisor ([0-9a-f]{12}) \(pid (\d+)/.exec(line)).find((m) => Number(m[2]) === c.child.pid)[1]
  // reached from anywhere by its script (-c) or by the id ls shows (--id)
  const byScript = await cli(['ls', '--json', '-c', path.join(APPS, 'pid-server.js')], { env: env(), cwd: base })
  expect(JSON.parse(byScript.stdout).map((x) => x.pid)).toEqual([c.child.pid])
  const byId = await cli(['ls', '--json', '--id', cId], { env: env(), cwd: base })
  expect(JSON.parse(byId.stdout).map((x) => x.pid)).toEqual([c.child.pid])

  // stop all in a stops a's supervisor only
  const stopA = await cli(['stop', 'all'], { env: env(), cwd: a.dir })
  expect(stopA.stdout).toMatch(/^stopped the supervisor of .*a\/httpsys\.config\.js/)
  expect(await a.run.exited).toEqual({ code: 0, signal: null })
  expect((await get(b.port, '/')).status).toBe(200)
  expect(alive(c.child.pid)).toBe(true)

  // from a folder with no project, a command without a target names what runs and how to pick
  const bare = await cli(['stop', 'app'], { env: env(), cwd: base })
  expect(bare.code).toBe(1)
  expect(bare.stderr).toMatch(/No running httpsys supervisor for this folder .*Running: [0-9a-f]{12} \(.*\), [0-9a-f]{12} \(.*\); choose one with -c .* or --id <id>, or act on all with --all-supervisors/)

  // -c with the other project's file reaches it from anywhere; --all-supervisors reaches all
  const stopBApp = await cli(['stop', 'app', '-c', path.join(b.dir, 'httpsys.config.js')], { env: env(), cwd: base })
  expect(stopBApp.stdout).toMatch(/^app \[.*b\/httpsys\.config\.js\]: stopped\n$/)
  const everything = await cli(['stop', 'all', '--all-supervisors'], { env: env(), cwd: base })
  expect(everything.code).toBe(0)
  expect(everything.stdout.match(/^stopped the supervisor of /gm)).toHaveLength(2)
  expect(await waitUntil(() => b.run.child.exitCode !== null && c.child.exitCode !== null, 10000)).toBe(true)
})
