'use strict'

// Linux: the unit `httpsys service install` writes, its escaping, where it goes and
// what it says about stopping; uninstall and status read the same files. No systemctl
// is run: the unit is checked by `systemd-analyze verify` where that exists.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const service = require('../../../src/service')
const systemd = require('../../../src/service/systemd')
const { project } = require('./helpers')

const BIN = '/opt/httpsys/bin/httpsys'

let p
afterEach(() => p && p.cleanup())

/** deps for a Linux machine whose files live under p.root */
function linux ({ uid = 1000, env = { PATH: '/usr/local/bin:/usr/bin:/bin', XDG_RUNTIME_DIR: '/run/user/1000' }, lookupUser } = {}) {
  return {
    platform: 'linux',
    uid,
    username: uid === 0 ? 'root' : 'alice',
    home: path.join(p.root, 'home'),
    env,
    execPath: '/usr/bin/node',
    bin: BIN,
    lookupUser: lookupUser || ((name) => name !== 'ghost'),
    runtimeDir: () => '/run/user/1000/httpsys',
    // a system unit goes to /etc/systemd/system: kept under the temp root here
    fsys: redirect('/etc/systemd/system', path.join(p.root, 'etc')),
    // systemctl as on a machine where the unit is loaded; never the real one
    exec: () => ({ status: 0, stdout: '', stderr: '' })
  }
}

function redirect (from, to) {
  const map = (f) => typeof f === 'string' && (f === from || f.startsWith(from + '/')) ? to + f.slice(from.length) : f
  const out = {}
  for (const name of ['existsSync', 'readFileSync', 'writeFileSync', 'mkdirSync', 'unlinkSync', 'readdirSync', 'lstatSync']) {
    out[name] = (f, ...rest) => fs[name](map(f), ...rest)
  }
  return out
}

const lines = (text, key) => text.split('\n').filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1))

describe('the unit', () => {
  test('a user unit by default: ExecStart, WorkingDirectory, runtime directory, stop settings', async () => {
    p = project({ api: { kill_timeout: '30s' }, web: {} })
    const r = await service.install({ config: p.config }, linux())
    expect(r.file).toBe(path.join(p.root, 'home', '.config', 'systemd', 'user', 'httpsys-shop.service'))
    expect(r.scope).toBe('user')
    const text = fs.readFileSync(r.file, 'utf8')
    expect(text.split('\n')[0]).toContain(systemd.MARK)
    expect(lines(text, 'ExecStart')).toEqual([`/usr/bin/node ${BIN} start -c ${p.config}`])
    expect(lines(text, 'ExecReload')).toEqual([`/usr/bin/node ${BIN} reload all -c ${p.config}`])
    expect(lines(text, 'WorkingDirectory')).toEqual([p.dir])
    expect(lines(text, 'Environment')).toEqual(['"HTTPSYS_RUNTIME_DIR=/run/user/1000/httpsys"', '"PATH=/usr/bin:/usr/local/bin:/bin"', 'HTTPSYS_SERVICE=1'])
    // the stop ladder is the supervisor's: SIGTERM to it alone, and time for the slowest app
    expect(lines(text, 'KillMode')).toEqual(['mixed'])
    expect(lines(text, 'TimeoutStopSec')).toEqual(['42s'])
    expect(lines(text, 'Restart')).toEqual(['on-failure'])
    expect(lines(text, 'WantedBy')).toEqual(['default.target'])
    for (const key of ['User', 'RuntimeDirectory', 'Wants', 'After']) expect(lines(text, key)).toEqual([])
    expect(r.commands).toEqual(['systemctl --user daemon-reload', 'systemctl --user enable --now httpsys-shop'])
    expect(r.notes.join('\n')).toContain('loginctl enable-linger alice')
  })

  test('from the single executable: ExecStart runs the executable alone', async () => {
    p = project()
    const r = await service.install({ config: p.config }, { ...linux(), execPath: '/opt/httpsys/httpsys', bin: null })
    const text = fs.readFileSync(r.file, 'utf8')
    expect(lines(text, 'ExecStart')).toEqual([`/opt/httpsys/httpsys start -c ${p.config}`])
    expect(lines(text, 'ExecReload')).toEqual([`/opt/httpsys/httpsys reload all -c ${p.config}`])
  })

  test('as root: a system unit with its own runtime directory, --user and network-online', async () => {
    p = project()
    const r = await service.install({ config: p.config, user: 'www-data', name: 'shop' }, linux({ uid: 0 }))
    expect(r.file).toBe('/etc/systemd/system/shop.service')
    const text = fs.readFileSync(path.join(p.root, 'etc', 'shop.service'), 'utf8')
    expect(lines(text, 'User')).toEqual(['www-data'])
    expect(lines(text, 'RuntimeDirectory')).toEqual(['httpsys-shop'])
    expect(lines(text, 'RuntimeDirectoryMode')).toEqual(['0700'])
    expect(lines(text, 'Environment')[0]).toBe('"HTTPSYS_RUNTIME_DIR=/run/httpsys-shop"')
    expect(lines(text, 'Wants')).toEqual(['network-online.target'])
    expect(lines(text, 'WantedBy')).toEqual(['multi-user.target'])
    // the default kill_timeout is 10 s
    expect(lines(text, 'TimeoutStopSec')).toEqual(['22s'])
    expect(r.commands).toEqual(['systemctl daemon-reload', 'systemctl enable --now shop'])
    expect(r.notes.join('\n')).toContain('HTTPSYS_RUNTIME_DIR=/run/httpsys-shop')
  })

  test('paths with spaces, quotes, % and $ are quoted and escaped for systemd', () => {
    expect(systemd.execArg('/srv/a b/c')).toBe('"/srv/a b/c"')
    expect(systemd.execArg('/srv/100%/x')).toBe('/srv/100%%/x')
    expect(systemd.execArg('/srv/$HOME "q"\\x')).toBe('"/srv/$$HOME \\"q\\"\\\\x"')
    expect(systemd.envAssignment('A', 'b "c" 5%')).toBe('"A=b \\"c\\" 5%%"')
    expect(() => systemd.execArg('/a\nb')).toThrow(/line break/)
  })

  test('installing again replaces our unit; a unit httpsys did not write is left alone', async () => {
    p = project()
    const deps = linux()
    const first = await service.install({ config: p.config }, deps)
    expect(first.replaced).toBe(false)
    const again = await service.install({ config: p.config }, deps)
    expect(again.replaced).toBe(true)
    expect(again.commands).toEqual(['systemctl --user daemon-reload', 'systemctl --user restart httpsys-shop'])
    fs.writeFileSync(first.file, '[Service]\nExecStart=/bin/true\n')
    await expect(service.install({ config: p.config }, deps)).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_EXISTS' })
    await expect(service.uninstall({ config: p.config }, deps)).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_DENIED' })
    expect(fs.readFileSync(first.file, 'utf8')).toBe('[Service]\nExecStart=/bin/true\n')
  })

  test('uninstall removes the unit and the links `systemctl enable` made; again: nothing to do', async () => {
    p = project()
    const deps = linux()
    const r = await service.install({ config: p.config }, deps)
    const wants = path.join(r.dir, 'default.target.wants')
    fs.mkdirSync(wants)
    fs.symlinkSync(r.file, path.join(wants, 'httpsys-shop.service'))
    const s = await service.status({ config: p.config }, deps)
    expect(s).toMatchObject({ installed: true, ours: true, enabled: true, configFile: p.config, runtimeDir: '/run/user/1000/httpsys', supervisor: null })
    const u = await service.uninstall({ config: p.config }, deps)
    expect(u).toMatchObject({ removed: true, stopped: true, links: [path.join(wants, 'httpsys-shop.service')] })
    // stopped, and systemd told: nothing is left to run by hand
    expect(u.commands).toEqual([])
    expect(fs.existsSync(r.file)).toBe(false)
    expect(await service.uninstall({ config: p.config }, deps)).toMatchObject({ removed: false })
    expect(await service.status({ config: p.config }, deps)).toMatchObject({ installed: false })
  })

  test('status reads an escaped config path back', async () => {
    p = project({ web: {} }, { folder: 'my shop 100%' })
    const deps = linux()
    await service.install({ config: p.config, name: 'shop' }, deps)
    expect((await service.status({ name: 'shop' }, deps)).configFile).toBe(p.config)
  })
})

describe('arguments', () => {
  test('names: the default comes from the config\'s folder; a bad --name is a usage error', async () => {
    p = project({ web: {} }, { folder: 'My Shop!' })
    const r = await service.install({ config: p.config }, linux())
    expect(r.name).toBe('httpsys-my-shop')
    for (const bad of ['a b', '-x', 'x/y', 'x.service', '', 'é']) {
      await expect(service.install({ config: p.config, name: bad }, linux())).rejects.toBeInstanceOf(service.UsageError)
    }
  })

  test('--user needs a system unit; --system needs root; an unknown user is refused', async () => {
    p = project()
    await expect(service.install({ config: p.config, user: 'www-data' }, linux())).rejects.toThrow(/--user needs a system service/)
    // the user's own name is what a user unit runs as anyway
    await expect(service.install({ config: p.config, user: 'alice' }, linux())).resolves.toMatchObject({ scope: 'user' })
    await expect(service.install({ config: p.config, system: true }, linux())).rejects.toMatchObject({
      code: 'ERR_HTTPSYS_SERVICE_DENIED',
      message: expect.stringContaining(`sudo httpsys service install -c ${p.config} --name httpsys-shop --system`)
    })
    await expect(service.install({ config: p.config, user: 'ghost' }, linux({ uid: 0 }))).rejects.toThrow(/no such user/)
  })

  test('a missing or broken config fails before anything is written', async () => {
    p = project()
    await expect(service.install({ config: path.join(p.dir, 'nope.config.js') }, linux())).rejects.toMatchObject({ code: 'ERR_HTTPSYS_CONFIG_NOT_FOUND' })
    fs.writeFileSync(p.config, 'module.exports = { apps: [{ name: "web", script: "./web.js", kill_timeout: "soon" }] }\n')
    await expect(service.install({ config: p.config }, linux())).rejects.toMatchObject({ code: 'ERR_HTTPSYS_CONFIG_INVALID' })
    expect(fs.existsSync(path.join(p.root, 'home', '.config'))).toBe(false)
  })

  test('another platform has no service manager httpsys knows', async () => {
    p = project()
    await expect(service.install({ config: p.config }, { ...linux(), platform: 'freebsd' })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_UNSUPPORTED' })
  })
})

const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' })
const haveAnalyze = !analyze.error && analyze.status === 0
if (!haveAnalyze) console.log('systemd-analyze is not installed here (apt-get install systemd): the `systemd-analyze verify` tests are skipped')

describe('systemd-analyze verify', () => {
  const verify = (file, user) => {
    // a user manager needs a runtime directory to exist, even offline
    const env = { ...process.env, XDG_RUNTIME_DIR: fs.mkdtempSync(path.join(p.root, 'xdg-')) }
    return spawnSync('systemd-analyze', [...(user ? ['--user'] : []), 'verify', '--man=no', file], { encoding: 'utf8', env })
  }
  const real = (deps) => ({ ...deps, execPath: process.execPath, bin: path.join(__dirname, '..', '..', '..', 'bin', 'httpsys') })

  ;(haveAnalyze ? test : test.skip)('accepts the user unit and the system unit, with odd paths too', async () => {
    p = project({ api: { kill_timeout: '1m' } }, { folder: 'odd dir 100% $HOME "q"' })
    const user = await service.install({ config: p.config, name: 'shop' }, real(linux()))
    const system = await service.install({ config: p.config, name: 'shop', user: 'daemon' }, real(linux({ uid: 0 })))
    for (const [file, asUser] of [[user.file, true], [path.join(p.root, 'etc', path.basename(system.file)), false]]) {
      const r = verify(file, asUser)
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' })
    }
  })

  ;(haveAnalyze ? test : test.skip)('and would say so about a broken unit (the check checks)', () => {
    p = project()
    const file = path.join(p.root, 'broken.service')
    fs.writeFileSync(file, '[Service]\nExecStart=relative/path\nKillMode=sometimes\n')
    const r = verify(file, false)
    expect(r.stderr).toMatch(/KillMode|ExecStart|absolute/)
  })
})
