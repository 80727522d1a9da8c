'use strict'

// The text of `httpsys ls` and one frame of `httpsys monit`, from a supervisor's ls
// result (the shape src/supervisor/app-stats.js produces). A real terminal checks them
// too (test/integration/status-terminal.test.js).

const { createColors } = require('colorette')
const ls = require('../../../src/cli/ls')
const monit = require('../../../src/cli/monit')
const { formatLatency, formatRate } = require('../../../src/cli/format')

const plain = createColors({ useColor: false })
const coloured = createColors({ useColor: true })

function supervisor () {
  const inst = (n, over = {}) => ({
    app: 'api',
    inst: n,
    pid: 100 + n,
    state: 'ready',
    uptimeMs: 65000,
    restarts: 1,
    lastExit: null,
    memory: 50 * 1024 * 1024,
    cpu: 12.5,
    served: 900,
    inFlight: 2,
    reqPerSec: 15,
    p99Ms: 7.5,
    ...over
  })
  return {
    id: 'abc123',
    pid: 99,
    backend: 'hub',
    label: 'httpsys.config.js in /srv/shop',
    connections: 3,
    apps: [
      { name: 'api', state: 'degraded', type: 'web', urls: ['http://+:8080/api/'], waiting: 4, reqPerSec: 30, p99Ms: 7.5, history: [0, 10, 20, 40], instances: [inst(0), inst(1, { state: 'errored', pid: null, cpu: null, memory: null, reqPerSec: null, p99Ms: null, inFlight: null })] },
      { name: 'mailer', state: 'ready', type: 'worker', urls: [], waiting: null, reqPerSec: 0, p99Ms: null, history: [], instances: [inst(0, { app: 'mailer', reqPerSec: 0, p99Ms: null })] }
    ]
  }
}

describe('httpsys ls', () => {
  test('one row per instance with cpu, memory, req/s, p99, in flight; queue depth and URLs on the app\'s first row', () => {
    const text = ls.render([supervisor()], plain)
    const lines = text.split('\n')
    expect(lines[0]).toBe('supervisor abc123 (pid 99, native router): httpsys.config.js in /srv/shop')
    expect(lines[1].split(/\s{2,}/)).toEqual(['app', 'inst', 'pid', 'state', 'uptime', 'restarts', 'cpu', 'memory', 'req/s', 'p99', 'in flight', 'queued', 'urls'])
    expect(lines[2].split(/\s{2,}/)).toEqual(['api', '0', '100', 'ready', '1m 5s', '1', '12.5%', '50M', '15', '7.5 ms', '2', '4', 'http://+:8080/api/'])
    // the second instance: no app name, queue or URLs; unknowns are "-"
    expect(lines[3].trim().split(/\s{2,}/)).toEqual(['1', '-', 'errored', '1m 5s', '1', '-', '-', '-', '-', '-'])
    expect(lines[4]).toMatch(/^mailer .*\(no HTTP\)$/)
    expect(text).not.toMatch(/\x1b/) // eslint-disable-line no-control-regex
  })

  test('states are coloured in a terminal without moving the columns', () => {
    const lines = ls.render([supervisor()], coloured).split('\n')
    expect(lines[2]).toContain('\x1b[32mready\x1b[39m')
    expect(lines[3]).toContain('\x1b[31merrored\x1b[39m')
    // eslint-disable-next-line no-control-regex
    const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, '')
    expect(strip(lines[2])).toBe(ls.render([supervisor()], plain).split('\n')[2])
  })
})

describe('the native router\'s own process (issue 25)', () => {
  const withRouter = () => ({ ...supervisor(), router: { pid: 98, cpu: 3.2, memory: 9 * 1024 * 1024, uptimeMs: 65000, goroutines: 20 } })

  test('ls: a row of its own after the apps, its name over the app and inst columns, the table no wider', () => {
    const lines = ls.render([withRouter()], plain).split('\n')
    expect(lines[5].split(/\s{2,}/)).toEqual(['router', '98', 'ready', '1m 5s', '-', '3.2%', '9M', '-', '-', '-', '-'])
    expect(lines[5].indexOf('98')).toBe(lines[1].indexOf('pid'))
    const width = (t) => Math.max(...t.split('\n').map((l) => l.length))
    expect(width(ls.render([withRouter()], plain))).toBe(width(ls.render([supervisor()], plain)))
    // at 50 columns (short headers, columns left out) it still lines up
    const narrow = ls.render([withRouter()], plain, 50).split('\n')
    expect(narrow[5]).toMatch(/^router +98 +ready +- +3\.2% +9M\b/)
    expect(narrow[5].indexOf('98')).toBe(narrow[1].indexOf('pid'))
    for (const line of narrow.slice(1, 6)) expect(line.length).toBeLessThanOrEqual(50)
    expect(ls.render([withRouter()], coloured)).toContain('\x1b[32mready\x1b[39m')
    // no router process reported (none yet, or HTTP.SYS, the kernel's): no row
    expect(ls.render([supervisor()], plain)).not.toMatch(/^router/m)
  })

  test('monit: the same row', () => {
    const text = monit.render({ supervisors: [withRouter()], logs: [], width: 80, height: 30, colors: plain, now: new Date(0) })
    expect(text).toMatch(/^router +98 +ready +1m 5s +- +3\.2% +9M +- +- +- +-$/m)
  })

  test('ls and monit name the hub backend\'s router the native router (the only one it runs), HTTP.SYS by its backend', () => {
    const native = { ...withRouter(), routerKind: 'native' }
    expect(ls.render([native], plain).split('\n')[0]).toBe('supervisor abc123 (pid 99, native router): httpsys.config.js in /srv/shop')
    const text = monit.render({ supervisors: [native], logs: [], width: 80, height: 30, colors: plain, now: new Date(0) })
    expect(text).toContain('supervisor abc123 (pid 99, native router): ')
    // whatever routerKind says (none: a supervisor that did not say), the hub backend runs the native router
    expect(ls.render([{ ...supervisor(), routerKind: undefined }], plain).split('\n')[0]).toBe('supervisor abc123 (pid 99, native router): httpsys.config.js in /srv/shop')
    const httpsys = { ...supervisor(), backend: 'httpsys', routerKind: 'httpsys' }
    expect(ls.render([httpsys], plain).split('\n')[0]).toBe('supervisor abc123 (pid 99, httpsys): httpsys.config.js in /srv/shop')
  })
})

describe('fitting the terminal (issue 28: ls and monit were ~150 columns and wrapped at 80)', () => {
  // what a real project shows: a longer name, a longer URL, every number known
  const wide = () => {
    const s = supervisor()
    s.apps[0].name = 'api-gateway'
    s.apps[0].urls = ['http://api.example.com:18080/api/v1/']
    s.apps[0].instances[1] = { ...s.apps[0].instances[0], inst: 1, pid: 101, state: 'starting' }
    return s
  }
  const widest = (text) => Math.max(...text.split('\n').map((l) => l.length))

  test('ls at 80 columns: no line wider, shorter headers, the URLs below the table, every instance and state', () => {
    const text = ls.render([wide()], plain, 80)
    expect(widest(ls.render([wide()], plain))).toBeGreaterThan(80)
    expect(widest(text)).toBeLessThanOrEqual(80)
    const lines = text.split('\n')
    expect(lines[1]).toMatch(/^app +# +pid +state +up +↺ +cpu +mem +req\/s +p99 +busy +wait$/)
    expect(lines[2]).toMatch(/^api-gateway +0 +100 +ready +1m 5s +1 +12\.5% +50M +15 +7\.5 ms +2 +4$/)
    expect(lines[3]).toMatch(/^ +1 +101 +starting /)
    expect(lines.slice(5)).toEqual(['urls: api-gateway  http://api.example.com:18080/api/v1/', '      mailer       (no HTTP)'])
  })

  test('narrower still, the least needed columns go; a pipe (no width) gets every column', () => {
    const lines = ls.render([wide()], plain, 50).split('\n')
    // the table fits; a URL longer than the terminal is not cut
    for (const line of lines.slice(1, 5)) expect(line.length).toBeLessThanOrEqual(50)
    expect(lines[1]).toMatch(/^app +# +pid +state +↺ +cpu +mem$/)
    expect(lines[5]).toBe('urls: api-gateway  http://api.example.com:18080/api/v1/')
    expect(ls.render([wide()], plain).split('\n')[1].split(/\s{2,}/)).toContain('in flight')
  })

  test('coloured states stay in their column when columns are left out', () => {
    const strip = (t) => t.replace(/\x1b\[[0-9;]*m/g, '') // eslint-disable-line no-control-regex
    expect(strip(ls.render([wide()], coloured, 80))).toBe(ls.render([wide()], plain, 80))
    expect(ls.render([wide()], coloured, 80)).toContain('\x1b[33mstarting\x1b[39m')
  })

  test('monit at 80 columns shows ls\'s columns that fit, not a table cut off at the edge', () => {
    const text = monit.render({ supervisors: [wide()], logs: [], width: 80, height: 30, colors: plain, now: new Date(0) })
    expect(text).toMatch(/^app +# +pid +state +up +↺ +cpu +mem +req\/s +p99 +busy +wait$/m)
    expect(text).toMatch(/^api-gateway +0 +100 +ready +1m 5s +1 +12\.5% +50M +15 +7\.5 ms +2 +4$/m)
  })
})

describe('httpsys monit', () => {
  const frame = (over = {}) => monit.render({
    supervisors: [supervisor()],
    logs: Array.from({ length: 30 }, (_, i) => `[12:00:${String(i).padStart(2, '0')}] INFO: api#0 | line ${i}`),
    width: 100,
    height: 24,
    colors: plain,
    now: new Date(0),
    ...over
  })

  test('fits the terminal: at most height lines, none wider than width', () => {
    for (const [width, height] of [[100, 24], [60, 15], [200, 50]]) {
      const lines = frame({ width, height }).split('\n')
      expect(lines.length).toBeLessThanOrEqual(height)
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(width)
    }
  })

  test('the table, a sparkline and the rate per app, then the newest log lines', () => {
    const text = frame()
    expect(text).toContain('q: quit')
    expect(text).toMatch(/api\s+0\s+100\s+ready/)
    expect(text).toMatch(/api\s+ ▂▄█ {2}30 req\/s {2}p99 7\.5 ms/)
    expect(text).toContain('line 29') // the newest record
    expect(text).not.toContain('line 0\n')
  })

  test('says so when the supervisor has gone', () => {
    expect(frame({ supervisors: [], error: 'the supervisor is not running any more' })).toContain('not running any more')
    expect(frame({ supervisors: [] })).toContain('no httpsys supervisor is running')
  })

  test('sparkline: scaled to the largest, blank for zero, right-aligned', () => {
    expect(monit.sparkline([0, 1, 2, 4, 8], 7)).toBe('   ▁▂▄█')
    expect(monit.sparkline([], 3)).toBe('   ')
    expect(monit.sparkline([5, 5], 0)).toBe('')
  })

  test('clip counts what is visible, not colour codes', () => {
    const red = '\x1b[31mabcdef\x1b[39m'
    expect(monit.clip(red, 3)).toBe('\x1b[31mabc\x1b[0m')
    expect(monit.clip('abcdef', 3)).toBe('abc')
    expect(monit.clip('ab', 3)).toBe('ab')
  })
})

test('numbers people read: latency and rates', () => {
  expect(formatLatency(0.42)).toBe('0.42 ms')
  expect(formatLatency(2500)).toBe('2.5 s')
  expect(formatLatency(Infinity)).toBe('>100 s')
  expect(formatLatency(null)).toBe('-')
  expect(formatRate(1234.4)).toBe('1234')
  expect(formatRate(3.14159)).toBe('3.1')
  expect(formatRate(undefined)).toBe('-')
})
