'use strict'

// macOS's plist, and the `httpsys service` commands as a user meets them: what is
// printed, --json, and which mistakes are usage errors (exit 2) or coded errors (exit 1).

const fs = require('node:fs')
const path = require('node:path')
const service = require('../../../src/service')
const { stopTimeout, defaultName, nameProblem } = require('../../../src/service/common')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { project, cli } = require('./helpers')

let p
afterEach(() => p && p.cleanup())

function mac (extra = {}) {
  return { platform: 'darwin', uid: 501, username: 'alice', home: path.join(p.root, 'Users', 'alice'), env: { PATH: '/opt/homebrew/bin:/usr/bin' }, execPath: '/opt/homebrew/bin/node', bin: '/opt/homebrew/lib/node_modules/httpsys-cli/bin/httpsys', runtimeDir: () => '/var/folders/xy/T/httpsys-501', lookupUser: () => null, exec: () => ({ status: 0, stdout: '', stderr: '' }), ...extra }
}

function linux (extra = {}) {
  return { platform: 'linux', uid: 1000, username: 'alice', home: path.join(p.root, 'home'), env: { PATH: '/usr/bin', XDG_RUNTIME_DIR: '/run/user/1000' }, execPath: '/usr/bin/node', bin: '/opt/httpsys/bin/httpsys', runtimeDir: () => '/run/user/1000/httpsys', exec: () => ({ status: 0, stdout: '', stderr: '' }), ...extra }
}

describe('common rules', () => {
  test('the stop time is the largest kill_timeout + 12 s', () => {
    expect(stopTimeout({ apps: [{ kill_timeout: 10000 }, { kill_timeout: 45000 }] })).toEqual({ ms: 57000, killTimeout: 45000 })
  })

  test('names', () => {
    expect(defaultName('/srv/Shop Front/httpsys.config.js')).toBe('httpsys-shop-front')
    expect(defaultName('/httpsys.config.js')).toBe('httpsys-app')
    expect(nameProblem('httpsys-shop')).toBe(null)
    expect(nameProblem('a'.repeat(81))).toMatch(/1 to 80/)
  })
})

describe('launchd', () => {
  test('from the single executable: the executable alone is the program', async () => {
    p = project()
    const r = await service.install({ config: p.config, name: 'shop' }, mac({ execPath: '/usr/local/bin/httpsys', bin: null }))
    const text = fs.readFileSync(r.file, 'utf8')
    expect(text).toContain(['    <string>/usr/local/bin/httpsys</string>', '    <string>start</string>', '    <string>-c</string>'].join('\n'))
    expect(text).not.toContain('bin/httpsys</string>\n    <string>/usr/local/bin/httpsys')
  })

  test('a LaunchAgent: arguments, KeepAlive on failure only, ExitTimeOut from kill_timeout, the shell\'s runtime dir', async () => {
    p = project({ api: { kill_timeout: '20s' } }, { folder: 'a&b <shop>' })
    const r = await service.install({ config: p.config, name: 'shop' }, mac())
    expect(r.file).toBe(path.join(p.root, 'Users', 'alice', 'Library', 'LaunchAgents', 'shop.plist'))
    const text = fs.readFileSync(r.file, 'utf8')
    const esc = p.config.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    expect(text).toContain(['    <string>/opt/homebrew/bin/node</string>', '    <string>/opt/homebrew/lib/node_modules/httpsys-cli/bin/httpsys</string>',
      '    <string>start</string>', '    <string>-c</string>', `    <string>${esc}</string>`].join('\n'))
    expect(text).toMatch(/<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>/)
    expect(text).toMatch(/<key>ExitTimeOut<\/key>\s*<integer>32<\/integer>/)
    expect(text).toMatch(/<key>HTTPSYS_RUNTIME_DIR<\/key>\s*<string>\/var\/folders\/xy\/T\/httpsys-501<\/string>/)
    expect(text).not.toContain('UserName')
    // XML comments may not hold "--"
    for (const comment of text.match(/<!--[\s\S]*?-->/g)) expect(comment.slice(4, -3)).not.toContain('--')
    expect(r.commands).toEqual([`launchctl bootstrap gui/501 ${r.file}`])
    expect(fs.existsSync(path.join(p.root, 'Users', 'alice', 'Library', 'Logs', 'httpsys'))).toBe(true)
    expect(await service.status({ name: 'shop' }, mac())).toMatchObject({ installed: true, ours: true, configFile: p.config, runtimeDir: '/var/folders/xy/T/httpsys-501' })
    expect(await service.uninstall({ name: 'shop' }, mac())).toMatchObject({ removed: true, stopped: true, commands: [] })
  })

  test('a LaunchDaemon as root runs as --user, with a runtime dir of its own', async () => {
    p = project()
    const fsys = { ...fs, mkdirSync: () => {}, existsSync: () => false, writeFileSync: (file, text) => { fsys.written = [file, text] } }
    const r = await service.install({ config: p.config, name: 'shop', user: '_www' }, mac({ uid: 0, username: 'root', fsys }))
    expect(fsys.written[0]).toBe('/Library/LaunchDaemons/shop.plist')
    expect(fsys.written[1]).toContain('<key>UserName</key><string>_www</string>')
    expect(fsys.written[1]).toMatch(/<string>\/var\/tmp\/httpsys-shop<\/string>/)
    expect(r.commands).toEqual(['sudo launchctl bootstrap system /Library/LaunchDaemons/shop.plist'])
  })
})

describe('the CLI', () => {
  test('install prints what was written and the commands to run; --json for scripts', async () => {
    p = project()
    const { code, out } = await cli({ platform: 'linux', service: linux() }, 'service', 'install', '-c', p.config)
    expect(code).toBe(0)
    const file = path.join(p.root, 'home', '.config', 'systemd', 'user', 'httpsys-shop.service')
    expect(out).toBe([
      `wrote ${file} (systemd unit, user)`,
      `  runs: httpsys start -c ${p.config}`,
      '  stop: KillMode=mixed, TimeoutStopSec 22 s (the largest kill_timeout + 12 s)',
      'then run (or install with --now):',
      '  systemctl --user daemon-reload',
      '  systemctl --user enable --now httpsys-shop',
      'note: a user unit starts with alice\'s user manager: at boot, and after logging out, only with `loginctl enable-linger alice`',
      'note: its records: `journalctl --user -u httpsys-shop -f`; after changing an app\'s kill_timeout, install again (TimeoutStopSec follows it)',
      ''
    ].join('\n'))
    const json = JSON.parse((await cli({ platform: 'linux', service: linux() }, 'service', 'status', '-c', p.config, '--json')).out)
    expect(json).toMatchObject({ installed: true, name: 'httpsys-shop', file, enabled: false })
    const status = await cli({ platform: 'linux', service: linux() }, 'service', 'status', '--name', 'httpsys-shop')
    expect(status.out).toContain('  supervisor: not running\n')
    expect((await cli({ platform: 'linux', service: linux() }, 'service', 'uninstall', '--name', 'httpsys-shop')).out).toBe(
      `stopped httpsys-shop\nremoved ${file}\n`)
    expect((await cli({ platform: 'linux', service: linux() }, 'service', 'uninstall', '--name', 'httpsys-shop')).out).toBe(
      `httpsys-shop is not installed (no ${file}): nothing to remove\n`)
  })

  test.each([
    ['a bad name', ['--name', 'my shop'], 2, /the service name "my shop" must be 1 to 80 letters/],
    ['--user for a user unit', ['--user', 'www-data'], 2, /--user needs a system service/],
    ['--system without root', ['--system'], 1, /ERR_HTTPSYS_SERVICE_DENIED/],
    ['no config', ['-c', 'nope.config.js'], 1, /ERR_HTTPSYS_CONFIG_NOT_FOUND/]
  ])('%s', async (what, args, code, message) => {
    p = project()
    const r = await cli({ platform: 'linux', service: linux({ cwd: p.dir }) }, 'service', 'install', ...args)
    expect(r.code).toBe(code)
    expect(r.err).toMatch(message)
    expect(fs.existsSync(path.join(p.root, 'home'))).toBe(false)
  })

  test('Windows: install, status, uninstall through the fake addon', async () => {
    p = project({ web: { urls: ['http://+:8080/'] } })
    const addon = createFakeAddon()
    const deps = { platform: 'win32', loadAddon: () => addon, serviceConfig: createServiceConfig(() => addon), service: { cwd: p.dir, execPath: 'C:\\node\\node.exe', bin: 'C:\\h\\bin\\httpsys', env: { ProgramData: 'C:\\ProgramData' }, sleep: async () => {} } }
    const install = await cli(deps, 'service', 'install', '--name', 'shop')
    expect(install.code).toBe(0)
    expect(install.out.split('\n').slice(0, 7)).toEqual([
      'reserve http://+:8080/ for NT SERVICE\\shop: done',
      'created the Windows service shop: starts at boot, as NT SERVICE\\shop',
      `  runs: "C:\\node\\node.exe" "C:\\h\\bin\\httpsys" service run --name shop -c "${p.config}"`,
      '  on failure: restarted after 5 s, then 10 s, then 30 s (each time after that)',
      '  stop: the apps get up to 22 s (the largest kill_timeout + 12 s)',
      'then run (or install with --now):',
      '  sc.exe start shop'
    ])
    addon.scm.api.serviceControl('shop', 'start')
    const status = await cli(deps, 'service', 'status', '--name', 'shop')
    expect(status.out).toBe([
      'shop: Windows service, running (pid 4242)',
      '  starts: at boot, as NT SERVICE\\shop',
      `  runs: "C:\\node\\node.exe" "C:\\h\\bin\\httpsys" service run --name shop -c "${p.config}"`,
      '  on failure: restart after 5 s, restart after 10 s, restart after 30 s',
      '  records: C:\\ProgramData\\httpsys\\shop\\service.log',
      ''
    ].join('\n'))
    const uninstall = await cli(deps, 'service', 'uninstall', '--name', 'shop')
    expect(uninstall.out).toBe('stopped the Windows service shop\ndeleted the Windows service shop\nits URL reservations stay; to delete them, elevated:\n  httpsys urlacl delete http://+:8080/\n')
    addon.machine.elevated = false
    const denied = await cli(deps, 'service', 'install', '--name', 'shop')
    expect(denied).toMatchObject({ code: 1, err: expect.stringMatching(/needs Administrator rights.*\(ERR_HTTPSYS_NOT_ELEVATED\)$/) })
  })
})
