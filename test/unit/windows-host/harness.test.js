'use strict'

// npm run test:windows-host (test/windows-host/) runs on Windows only; its machinery does
// not: the order and format of its lines, skips under Wine, and cleanup in every case
// (a failed check, a failed cleanup, Ctrl+C). Also: the checks themselves are well
// formed, the Wine run's verdict (under-wine.js) catches what it must, and the
// certificates the TLS checks make are a chain a client that trusts the root verifies.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const https = require('node:https')
const os = require('node:os')
const path = require('node:path')
const { createHarness } = require('../../../test/windows-host/lib/harness')
const { problems } = require('../../../test/windows-host/under-wine')
const { makeCertificates, findOpenssl } = require('../../../test/windows-host/lib/certs')

const ROOT = path.join(__dirname, '..', '..', '..')

function harness (options = {}) {
  const lines = []
  const h = createHarness({ print: (l) => lines.push(l), wine: null, context: {}, ...options })
  return { h, lines }
}

test('checks run in order, one line each, then "N skipped" and "N passed, N failed"', async () => {
  const { h, lines } = harness()
  const ran = []
  const counts = await h.run([
    { group: 'a', checks: [{ name: 'one', run: () => ran.push(1) }, { name: 'two', run: () => { throw new Error('boom') } }] },
    { group: 'b', checks: [{ name: 'three', run: (t) => t.skip('not here') }] }
  ])
  expect(ran).toEqual([1])
  expect(lines[0]).toMatch(/^ok {4}1 a: one \(\d+ ms\)$/)
  expect(lines[1]).toMatch(/^FAIL {2}2 a: two \(\d+ ms\)$/)
  expect(lines.some((l) => /^ {8}Error: boom/.test(l))).toBe(true)
  expect(lines).toContain('skip  3 b: three: skipped: not here')
  expect(lines.slice(-2)).toEqual(['1 skipped', '1 passed, 1 failed'])
  expect(counts).toEqual({ passed: 1, failed: 1, skipped: 1 })
})

test('under Wine a check with a Wine reason is reported skipped with it and never runs', async () => {
  const { h, lines } = harness({ wine: '8.0' })
  const run = jest.fn()
  await h.run([{ group: 'tls', checks: [{ name: 'handshake', wine: 'Wine has no HTTPS', run }, { name: 'other', run: () => {} }] }])
  expect(run).not.toHaveBeenCalled()
  expect(lines[0]).toBe('skip  1 tls: handshake: skipped: Wine has no HTTPS')
  expect(lines[1]).toMatch(/^ok {4}2 tls: other/)
  expect(lines.slice(-2)).toEqual(['1 skipped', '1 passed, 0 failed'])
})

test('what a check creates is undone when it fails, its group\'s after the group, the run\'s at the end, newest first', async () => {
  const { h, lines } = harness()
  const undone = []
  await h.run([
    {
      group: 'g',
      checks: [
        {
          name: 'makes things, then fails',
          run (t) {
            t.cleanupAtEnd('binding', () => undone.push('binding'))
            t.cleanupAfterGroup('supervisor', () => undone.push('supervisor'))
            t.cleanup('reservation', () => undone.push('reservation'))
            t.cleanup('service', () => undone.push('service'))
            throw new Error('the check failed')
          }
        },
        { name: 'the next one still runs', run: () => undone.push('next ran') }
      ]
    },
    { group: 'h', checks: [{ name: 'later', run: () => undone.push('later ran') }] }
  ])
  expect(undone).toEqual(['service', 'reservation', 'next ran', 'supervisor', 'later ran', 'binding'])
  expect(lines.slice(-1)).toEqual(['2 passed, 1 failed'])
})

test('a cleanup that fails is reported and counted as a failure; the others still run', async () => {
  const { h, lines } = harness()
  const undone = []
  await h.run([{
    group: 'g',
    checks: [{
      name: 'ok',
      run (t) {
        t.cleanup('first', () => undone.push('first'))
        t.cleanup('delete the URL reservation http://+:1/x/', () => { throw new Error('access denied') })
      }
    }]
  }])
  expect(undone).toEqual(['first'])
  expect(lines).toContain('FAIL    cleanup: could not delete the URL reservation http://+:1/x/')
  expect(lines.slice(-1)).toEqual(['1 passed, 1 failed'])
})

test('Ctrl+C during a check: it counts as failed, everything pending is undone, the summary is printed once', async () => {
  const { h, lines } = harness()
  const undone = []
  let started
  const running = new Promise((resolve) => { started = resolve })
  const run = h.run([{
    group: 'g',
    checks: [{
      name: 'hangs',
      run (t) {
        t.cleanupAtEnd('binding', () => undone.push('binding'))
        t.cleanupAfterGroup('supervisor', () => undone.push('supervisor'))
        t.cleanup('service', () => undone.push('service'))
        started()
        return new Promise(() => {})
      }
    }]
  }])
  run.catch(() => {})
  await running
  const counts = h.interrupt('SIGINT')
  expect(undone).toEqual(['service', 'supervisor', 'binding'])
  expect(counts.failed).toBe(1)
  expect(lines).toContain('FAIL    interrupted (SIGINT): the check in progress did not finish')
  expect(lines.slice(-2)).toEqual(['0 skipped', '0 passed, 1 failed'])
  h.interrupt('exit') // the 'exit' handler after it: nothing twice
  expect(lines.filter((l) => /passed, .* failed/.test(l))).toHaveLength(1)
})

test('the run\'s checks: named, unique, runnable; every Wine reason cites docs/wine.md; --list prints them in order', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'test', 'windows-host', 'run.js'), '--list'], { encoding: 'utf8' })
  expect(r.status).toBe(0)
  const listed = r.stdout.trim().split('\n')
  const titles = []
  for (const file of fs.readdirSync(path.join(ROOT, 'test', 'windows-host')).filter((f) => f.endsWith('.js') && !['run.js', 'under-wine.js'].includes(f))) {
    const { group, checks } = require(path.join(ROOT, 'test', 'windows-host', file))
    expect(typeof group).toBe('string')
    for (const c of checks) {
      expect(typeof c.run).toBe('function')
      titles.push(`${group}: ${c.name}`)
      if (c.wine) expect(c.wine).toMatch(/docs\/wine\.md \d/)
    }
  }
  expect(new Set(titles).size).toBe(titles.length)
  // every group file is in the run, once
  expect(listed.map((l) => l.replace(/ {2}\[Wine: .*\]$/, '')).sort()).toEqual(titles.sort())
  // the Linux "run": it says where it runs, and fails
  const linux = spawnSync(process.execPath, [path.join(ROOT, 'test', 'windows-host', 'run.js')], { encoding: 'utf8' })
  expect(linux.status).toBe(1)
  expect(linux.stdout.trim().split('\n').slice(-1)).toEqual(['0 passed, 1 failed'])
})

describe('the Wine run\'s verdict (under-wine.js)', () => {
  const expected = [{ title: 'a: one', wine: null }, { title: 'b: two', wine: 'no HTTPS (docs/wine.md 2.9)' }]
  const good = 'header\nok    1 a: one (5 ms)\nskip  2 b: two: skipped: no HTTPS (docs/wine.md 2.9)\n1 skipped\n1 passed, 0 failed\n'

  test('holds for checks in order, skips with their reason, and the right summary', () => {
    expect(problems(good, expected)).toEqual([])
  })

  test('a check Wine cannot do reported as passed is caught', () => {
    const out = good.replace('skip  2 b: two: skipped: no HTTPS (docs/wine.md 2.9)\n1 skipped\n1 passed', 'ok    2 b: two (3 ms)\n0 skipped\n2 passed')
    expect(problems(out, expected).join('\n')).toMatch(/must be skipped with its reason/)
  })

  test('a failure, another order or a wrong summary is caught', () => {
    expect(problems(good.replace('ok    1 a: one', 'FAIL  1 a: one'), expected).join('\n')).toMatch(/failed: 1 a: one|failed: a: one/)
    const swapped = 'ok    1 b: two (1 ms)\nok    2 a: one (1 ms)\n0 skipped\n2 passed, 0 failed\n'
    expect(problems(swapped, expected).join('\n')).toMatch(/the order of run.js/)
    expect(problems(good.replace('1 passed, 0 failed', '2 passed, 0 failed'), expected).join('\n')).toMatch(/the summary/)
  })
})

const openssl = findOpenssl()
;(openssl ? test : test.skip)('the certificates: a PFX with leaf and intermediate that a client trusting only the root verifies', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-host-certs-'))
  try {
    const c = makeCertificates(dir, { openssl })
    const server = https.createServer({ pfx: fs.readFileSync(c.serverPfx), passphrase: c.passphrase }, (req, res) => res.end('ok'))
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const chain = await new Promise((resolve, reject) => {
        https.get({ host: '127.0.0.1', port: server.address().port, servername: 'localhost', ca: c.rootPem, agent: false }, (res) => {
          const names = []
          let cert = res.socket.getPeerCertificate(true)
          while (cert && cert.subject && names[names.length - 1] !== cert.subject.CN) {
            names.push(cert.subject.CN)
            cert = cert.issuerCertificate
          }
          res.resume()
          res.on('end', () => resolve(names))
        }).on('error', reject)
      })
      expect(chain).toEqual(['localhost', 'httpsys host test intermediate', 'httpsys host test root'])
    } finally {
      server.close()
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
