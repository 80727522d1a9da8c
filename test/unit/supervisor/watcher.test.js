'use strict'

// Watch mode: what reloads and what never does, and a burst of changes as one reload.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const pino = require('pino')
const { AppWatcher, compileIgnore, ignoreFunction } = require('../../../src/supervisor/watcher')

test.each([
  ['uploads', 'uploads/a.png', true],
  ['uploads', 'public/uploads/a.png', true], // a bare name matches anywhere
  ['uploads', 'uploadsx/a.png', false],
  ['public/uploads', 'public/uploads/x/y', true],
  ['public/uploads', 'uploads/x', false],
  ['*.tmp', 'a.tmp', true],
  ['*.tmp', 'deep/dir/a.tmp', true],
  ['src/*.tmp', 'src/deep/a.tmp', false],
  ['**/*.tmp', 'src/deep/a.tmp', true],
  ['**/*.tmp', 'a.tmp', true],
  ['data/**', 'data/a/b.json', true],
  ['./cache/', 'cache/x', true],
  ['file?.js', 'file1.js', true],
  ['file?.js', 'file10.js', false]
])('ignore_watch %p matches %p: %p', (pattern, rel, expected) => {
  expect(compileIgnore(pattern)(rel)).toBe(expected)
})

test('node_modules, dotfiles and log directories are never watched', () => {
  const cwd = path.join(os.tmpdir(), '.hidden-parent', 'proj')
  const ignored = ignoreFunction({ cwd, watch: [cwd], ignore_watch: ['*.log'] }, [path.join(cwd, 'logs')])
  expect(ignored(path.join(cwd, 'src', 'app.js'))).toBe(false) // a dot dir above the root does not count
  expect(ignored(path.join(cwd, 'node_modules', 'x', 'i.js'))).toBe(true)
  expect(ignored(path.join(cwd, '.git', 'HEAD'))).toBe(true)
  expect(ignored(path.join(cwd, 'src', '.env'))).toBe(true)
  expect(ignored(path.join(cwd, 'logs'))).toBe(true)
  expect(ignored(path.join(cwd, 'logs', 'api.log'))).toBe(true)
  expect(ignored(path.join(cwd, 'debug.log'))).toBe(true)
})

test('a burst of changes is one reload, after watch_delay of quiet', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-watch-'))
  fs.mkdirSync(path.join(dir, 'node_modules'))
  fs.writeFileSync(path.join(dir, 'app.js'), '1')
  const bursts = []
  const watcher = new AppWatcher({ name: 'w', cwd: dir, watch: [dir], ignore_watch: [], watch_delay: 150 }, {
    logger: pino({ level: 'silent' }),
    onChange: (files) => bursts.push({ at: Date.now(), files })
  })
  try {
    await watcher.start()
    for (let i = 0; i < 5; i++) {
      fs.writeFileSync(path.join(dir, 'app.js'), String(i))
      fs.writeFileSync(path.join(dir, `new${i}.js`), String(i))
      fs.writeFileSync(path.join(dir, 'node_modules', `dep${i}.js`), String(i))
      await new Promise((resolve) => setTimeout(resolve, 40))
    }
    const lastWrite = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect(bursts).toHaveLength(1)
    expect(bursts[0].at - lastWrite).toBeGreaterThanOrEqual(100)
    expect(bursts[0].files.sort()).toEqual(['app.js', 'new0.js', 'new1.js', 'new2.js', 'new3.js', 'new4.js'])
  } finally {
    await watcher.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
