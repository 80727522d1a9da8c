'use strict'

// HTTP.SYS's kernel response cache (docs/output-cache.md, "Invalidation on HTTP.SYS";
// issue 24, defect 5): a cacheable GET is answered without reaching the app; after
// `httpsys reload` the next GET reaches the new process, and after a worker is killed
// its replacement; and, without the supervisor, which flush empties a worker's entry:
// the worker's own (HttpFlushResponseCache on its handle) must, and what the
// controller's did is noted (HTTP.SYS is expected to flush only the caller's entries).

const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const path = require('node:path')
const readline = require('node:readline')
const { need } = require('./lib/host')

const WINE = 'Wine ignores the cache policy (docs/wine.md 2.10): nothing is cached there'

/** GETs /static/x until two answers in a row are the same one: the cached answer. */
async function cachedAnswer (h, base) {
  let prev = await h.getJson(`${base}/static/x`)
  for (let i = 0; i < 3; i++) {
    const again = await h.getJson(`${base}/static/x`)
    if (again.pid === prev.pid && again.n === prev.n) return prev
    prev = again
  }
  throw new Error(`not answered from the cache: every GET reached the app (the last: ${JSON.stringify(prev)})`)
}

module.exports = {
  group: 'cache',
  checks: [
    {
      name: 'a cacheable GET (Cache-Control: public, max-age=60) is answered from the kernel cache: the app sees it once',
      wine: WINE,
      async run (t) {
        const h = t.host
        const port = await h.freePort()
        const config = h.writeConfig('cache', {
          backend: 'httpsys',
          apps: [{ name: 'cached', script: path.join(h.APPS, 'host-app.js'), urls: [`http://+:${port}/`], env: { HOST_APP: 'cached' }, kill_timeout: '5s' }]
        })
        const sup = h.startSupervisor(t, 'cache', ['-c', config], { cwd: path.dirname(config), forGroup: true })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        const base = `http://127.0.0.1:${port}`
        const first = await cachedAnswer(h, base)
        const count = await h.getJson(`${base}/count`)
        assert.equal(count.hits, 1, `the app saw /static/x ${count.hits} times`)
        const state = await h.run('netsh', ['http', 'show', 'cachestate'])
        t.note(/static\/x/i.test(state.output) ? 'netsh http show cachestate lists /static/x' : 'netsh http show cachestate does not list /static/x')
        Object.assign(t.shared, { sup, base, pid: first.pid })
      }
    },
    {
      name: 'httpsys reload: once the old instance has exited, the next GET reaches the new one',
      wine: WINE,
      async run (t) {
        const h = t.host
        const sup = need(t.shared.sup, 'the supervisor of the first cache check')
        const { base } = t.shared
        const old = await cachedAnswer(h, base)
        const before = sup.records().length
        const r = await sup.httpsys(['reload', 'cached'])
        assert.equal(r.code, 0, r.output)
        await sup.waitRecord((x) => x.event === 'exit' && x.pid === old.pid, `the exit of the old instance (pid ${old.pid})`, { after: before })
        const now = await h.getJson(`${base}/static/x`)
        assert.notEqual(now.pid, old.pid, `pid ${old.pid} exited, yet its cached answer was served: ${JSON.stringify(now)}`)
        assert.equal(now.n, 1)
      }
    },
    {
      name: 'a worker killed with taskkill /F: the next GET reaches its replacement (the dead process\'s entries are gone)',
      wine: WINE,
      async run (t) {
        const h = t.host
        const sup = need(t.shared.sup, 'the supervisor of the first cache check')
        const { base } = t.shared
        const old = await cachedAnswer(h, base)
        const before = sup.records().length
        // no /T: the worker alone, as a crash would end it; it cannot flush anything
        const r = await h.run('taskkill', ['/F', '/PID', String(old.pid)])
        assert.equal(r.code, 0, r.output)
        const ready = await sup.waitRecord((x) => x.event === 'ready' && x.app === 'cached' && x.pid !== old.pid, 'the replacement ready', { after: before })
        const now = await h.getJson(`${base}/static/x`)
        assert.equal(now.pid, ready.pid, `the killed pid ${old.pid}'s cached answer was served: ${JSON.stringify(now)}`)
        await sup.stop()
      }
    },
    {
      name: 'HttpFlushResponseCache from the worker\'s own handle empties its entry while it runs',
      wine: WINE,
      async run (t) {
        const h = t.host
        const backend = require(path.join(h.ROOT, 'src', 'queue', 'httpsys'))
        const port = await h.freePort()
        const prefix = `http://+:${port}/flush/`
        const name = `httpsys-host-${process.pid}-flush`
        const controller = backend.createQueue(name, { urls: [prefix] })
        t.cleanup(`close the request queue ${name}`, () => controller.close())
        const worker = spawn(process.execPath, [path.join(h.APPS, 'cache-worker.js')], {
          cwd: h.ROOT,
          env: { ...process.env, HTTPSYS_BACKEND: 'httpsys', HTTPSYS_QUEUE: name, HTTPSYS_QUEUE_URLS: prefix },
          stdio: ['pipe', 'pipe', 'inherit'],
          windowsHide: true
        })
        t.cleanup(`stop the cache worker (pid ${worker.pid})`, () => h.kill(worker.pid))
        const lines = readline.createInterface({ input: worker.stdout })
        const nextLine = (pattern) => new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`the cache worker did not print ${pattern}`)), 15000)
          const on = (line) => {
            if (!pattern.test(line)) return
            clearTimeout(timer)
            lines.off('line', on)
            resolve(line)
          }
          lines.on('line', on)
        })
        const ready = nextLine(/^(READY|ERROR)/)
        assert.match(await ready, /^READY/)
        const base = `http://127.0.0.1:${port}/flush`
        const cached = await cachedAnswer(h, base)

        const code = controller.flushCache()
        const afterController = await h.getJson(`${base}/static/x`)
        t.note(afterController.n === cached.n
          ? `the controller's flush (code ${code}) left the worker's entry in place: HTTP.SYS flushes only what the calling process cached`
          : `the controller's flush (code ${code}) emptied the worker's entry too`)
        const again = await cachedAnswer(h, base)

        const flushed = nextLine(/^FLUSHED/)
        worker.stdin.write('flush\n')
        assert.equal(await flushed, 'FLUSHED 0')
        const after = await h.getJson(`${base}/static/x`)
        assert.equal(after.n, again.n + 1, `the worker's own flush left its entry: ${JSON.stringify(after)}`)
        worker.stdin.write('exit\n')
      }
    }
  ]
}
