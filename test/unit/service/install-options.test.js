'use strict'

// `httpsys service install --dry-run | --now`, the scope as root, and an uninstall that
// stops the service before it removes it (issue 28 item 8). systemctl and launchctl are
// never run here: a fake records what would have been, and what was on disk then.

const fs = require('node:fs')
const path = require('node:path')
const service = require('../../../src/service')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { project, cli } = require('./helpers')

let p
afterEach(() => p && p.cleanup())

/** A fake exec: records each command with whether the unit file existed when it ran. */
function recorder (answer = () => ({ status: 0, stdout: '', stderr: '' })) {
  const calls = []
  const exec = (argv) => {
    calls.push({ command: argv.join(' '), unitThere: recorder.file ? fs.existsSync(recorder.file) : null })
    return answer(argv)
  }
  return { calls, exec }
}

function linux (extra = {}) {
  return {
    platform: 'linux',
    uid: 1000,
    username: 'alice',
    home: path.join(p.root, 'home'),
    env: { PATH: '/usr/bin', XDG_RUNTIME_DIR: '/run/user/1000' },
    execPath: '/usr/bin/node',
    bin: '/opt/httpsys/bin/httpsys',
    runtimeDir: () => '/run/user/1000/httpsys',
    lookupUser: () => true,
    ...extra
  }
}

const userUnit = () => path.join(p.root, 'home', '.config', 'systemd', 'user', 'httpsys-shop.service')

describe('--dry-run', () => {
  test('prints the unit and where it would go, and writes and runs nothing', async () => {
    p = project()
    const r = recorder()
    const { code, out } = await cli({ platform: 'linux', service: linux({ exec: r.exec }) }, 'service', 'install', '-c', p.config, '--dry-run')
    expect(code).toBe(0)
    expect(out).toContain(`(dry run: nothing was changed) would write ${userUnit()} (systemd unit, user)`)
    expect(out).toMatch(new RegExp(`--- ${userUnit().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n# httpsys-shop\\.service: written by \`httpsys service install\``))
    expect(out).toContain(`ExecStart=/usr/bin/node /opt/httpsys/bin/httpsys start -c ${p.config}`)
    expect(out).toContain('then it would take:\n  systemctl --user daemon-reload\n  systemctl --user enable --now httpsys-shop\n')
    expect(fs.existsSync(path.join(p.root, 'home'))).toBe(false)
    expect(r.calls).toEqual([])
    // --json carries the text for a script to diff
    const json = JSON.parse((await cli({ platform: 'linux', service: linux({ exec: r.exec }) }, 'service', 'install', '-c', p.config, '--dry-run', '--json')).out)
    expect(json).toMatchObject({ dryRun: true, file: userUnit(), scope: 'user' })
    expect(json.text).toContain('KillMode=mixed')
  })

  test('Windows: the service it would create and the reservations it would make; the SCM is not touched', async () => {
    p = project({ web: { urls: ['http://+:8080/'] } })
    const addon = createFakeAddon()
    const deps = { platform: 'win32', loadAddon: () => addon, serviceConfig: createServiceConfig(() => addon), service: { cwd: p.dir, execPath: 'C:\\node\\node.exe', bin: 'C:\\h\\bin\\httpsys', env: {} } }
    const r = await cli(deps, 'service', 'install', '--name', 'shop', '--dry-run')
    expect(r.code).toBe(0)
    expect(r.out).toContain('(dry run: nothing was changed) would reserve http://+:8080/ for NT SERVICE\\shop\n')
    expect(r.out).toContain('would create the Windows service shop: starts at boot, as NT SERVICE\\shop')
    expect(addon.scm.api.serviceQuery('shop').code).not.toBe(0)
  })
})

describe('--now', () => {
  test('enables and starts it as `systemctl enable --now` does, after writing the unit', async () => {
    p = project()
    const r = recorder()
    recorder.file = userUnit()
    const { code, out } = await cli({ platform: 'linux', service: linux({ exec: r.exec }) }, 'service', 'install', '-c', p.config, '--now')
    expect(code).toBe(0)
    expect(r.calls).toEqual([
      { command: 'systemctl --user daemon-reload', unitThere: true },
      { command: 'systemctl --user enable --now httpsys-shop', unitThere: true }
    ])
    expect(out).toContain('started httpsys-shop: systemctl --user daemon-reload, then systemctl --user enable --now httpsys-shop\n')
    expect(out).not.toContain('then run')
  })

  test('a start that fails says which command and what is left to run; the unit stays', async () => {
    p = project()
    const r = recorder((argv) => argv.includes('enable') ? { status: 1, stdout: '', stderr: 'Failed to connect to bus: No medium found\n' } : { status: 0 })
    const { code, err } = await cli({ platform: 'linux', service: linux({ exec: r.exec }) }, 'service', 'install', '-c', p.config, '--now')
    expect(code).toBe(1)
    expect(err).toMatch(/Cannot start httpsys-shop: `systemctl --user enable --now httpsys-shop` said: Failed to connect to bus: No medium found\. It is installed; run what is left yourself: `systemctl --user enable --now httpsys-shop` \(ERR_HTTPSYS_SERVICE_DENIED\)/)
    expect(fs.existsSync(userUnit())).toBe(true)
  })

  test('macOS: launchctl bootstrap', async () => {
    p = project()
    const r = recorder()
    const mac = { platform: 'darwin', uid: 501, username: 'alice', home: path.join(p.root, 'Users', 'alice'), env: { PATH: '/usr/bin' }, execPath: '/usr/local/bin/node', bin: '/opt/h/bin/httpsys', runtimeDir: () => '/tmp/h', exec: r.exec }
    const out = await service.install({ config: p.config, name: 'shop', now: true }, mac)
    expect(out.started).toBe(true)
    expect(r.calls.map((c) => c.command)).toEqual([`launchctl bootstrap gui/501 ${path.join(p.root, 'Users', 'alice', 'Library', 'LaunchAgents', 'shop.plist')}`])
  })

  test('Windows: the service is started through the SCM', async () => {
    p = project({ web: { urls: ['http://+:8080/'] } })
    const addon = createFakeAddon()
    const deps = { platform: 'win32', loadAddon: () => addon, serviceConfig: createServiceConfig(() => addon), service: { cwd: p.dir, execPath: 'C:\\node\\node.exe', bin: 'C:\\h\\bin\\httpsys', env: {} } }
    const r = await cli(deps, 'service', 'install', '--name', 'shop', '--now')
    expect(r.code).toBe(0)
    expect(r.out).toContain('started shop: sc.exe start shop\n')
    expect(addon.scm.api.serviceQuery('shop').state).not.toBe('stopped')
  })
})

describe('uninstall stops the service first', () => {
  test('systemctl stop while the unit is still there, then the unit goes, then daemon-reload', async () => {
    p = project()
    const r = recorder()
    recorder.file = userUnit()
    await service.install({ config: p.config }, linux({ exec: r.exec }))
    const u = await service.uninstall({ config: p.config }, linux({ exec: r.exec }))
    expect(r.calls).toEqual([
      { command: 'systemctl --user stop httpsys-shop', unitThere: true },
      { command: 'systemctl --user daemon-reload', unitThere: false }
    ])
    expect(u).toMatchObject({ removed: true, stopped: true, commands: [] })
  })

  test('a stop that fails removes nothing and says how to stop it; one not loaded is removed', async () => {
    p = project()
    await service.install({ config: p.config }, linux({ exec: recorder().exec }))
    const denied = recorder(() => ({ status: 1, stdout: '', stderr: 'Failed to stop httpsys-shop.service: Access denied\n' }))
    await expect(service.uninstall({ config: p.config }, linux({ exec: denied.exec }))).rejects.toMatchObject({
      code: 'ERR_HTTPSYS_SERVICE_DENIED',
      message: expect.stringContaining('Nothing was removed. Stop it (`systemctl --user stop httpsys-shop`), then uninstall again')
    })
    expect(fs.existsSync(userUnit())).toBe(true)
    const notLoaded = recorder((argv) => argv.includes('stop') ? { status: 5, stdout: '', stderr: 'Failed to stop httpsys-shop.service: Unit httpsys-shop.service not loaded.\n' } : { status: 0 })
    expect(await service.uninstall({ config: p.config }, linux({ exec: notLoaded.exec }))).toMatchObject({ removed: true, stopped: false })
    expect(fs.existsSync(userUnit())).toBe(false)
  })

  test('no systemctl at all (a container): nothing can be running it, the unit is removed', async () => {
    p = project()
    await service.install({ config: p.config }, linux({ exec: recorder().exec }))
    const missing = recorder(() => ({ error: Object.assign(new Error('spawnSync systemctl ENOENT'), { code: 'ENOENT' }) }))
    expect(await service.uninstall({ config: p.config }, linux({ exec: missing.exec }))).toMatchObject({ removed: true, stopped: false, commands: [] })
    expect(missing.calls.map((c) => c.command)).toEqual(['systemctl --user stop httpsys-shop'])
  })

  test('macOS: launchctl bootout before the plist goes', async () => {
    p = project()
    const r = recorder()
    const home = path.join(p.root, 'Users', 'alice')
    recorder.file = path.join(home, 'Library', 'LaunchAgents', 'shop.plist')
    const mac = { platform: 'darwin', uid: 501, username: 'alice', home, env: { PATH: '/usr/bin' }, execPath: '/usr/local/bin/node', bin: '/opt/h/bin/httpsys', runtimeDir: () => '/tmp/h', exec: r.exec }
    await service.install({ config: p.config, name: 'shop' }, mac)
    expect(await service.uninstall({ name: 'shop' }, mac)).toMatchObject({ removed: true, stopped: true })
    expect(r.calls).toEqual([{ command: 'launchctl bootout gui/501/shop', unitThere: true }])
  })
})

describe('as root', () => {
  test('neither --system nor --user: a usage error naming both choices, nothing written', async () => {
    p = project()
    const r = await cli({ platform: 'linux', service: linux({ uid: 0, username: 'root', env: { PATH: '/usr/bin', SUDO_USER: 'alice' }, exec: recorder().exec }) }, 'service', 'install', '-c', p.config)
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/as root, say which service: `httpsys service install --system --user alice` \(a system service that runs the apps as that account; --system alone runs them as root\), or a user service: `httpsys service install` as the user who runs the apps, without sudo/)
    expect(fs.existsSync(path.join(p.root, 'home'))).toBe(false)
  })

  test('--system: a system unit; --user <account> alone means one too', async () => {
    p = project()
    const written = []
    const fsys = { ...fs, mkdirSync: () => {}, existsSync: () => false, writeFileSync: (file) => written.push(file) }
    const deps = linux({ uid: 0, username: 'root', fsys, exec: recorder().exec })
    expect(await service.install({ config: p.config, system: true }, deps)).toMatchObject({ scope: 'system' })
    expect(await service.install({ config: p.config, user: 'www-data' }, deps)).toMatchObject({ scope: 'system' })
    expect(written).toEqual(['/etc/systemd/system/httpsys-shop.service', '/etc/systemd/system/httpsys-shop.service'])
  })
})
