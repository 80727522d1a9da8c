'use strict'

// `npm run build:exe` printed 12 `Can't find string offset for section name '.note.100'`
// warnings (issue 28): LIEF, inside postject, naming the note sections it rebuilds. They
// are harmless (node finds its blob by note, through the program headers), so the build
// leaves exactly them out. This injects a blob into a copy of this node, as the build
// does: postject alone warns, the build's injectBlob() does not, and the executable runs.

const { execFileSync, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..', '..')
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
const linux = process.platform === 'linux'

let dir
beforeAll(() => {
  if (!linux) return
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-inject-'))
  fs.writeFileSync(path.join(dir, 'main.js'), 'console.log("sea says hi")\n')
  fs.writeFileSync(path.join(dir, 'sea.json'), JSON.stringify({
    main: path.join(dir, 'main.js'), output: path.join(dir, 'blob'), disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false
  }))
  execFileSync(process.execPath, ['--experimental-sea-config', path.join(dir, 'sea.json')], { stdio: 'ignore' })
})
afterAll(() => { if (dir) fs.rmSync(dir, { recursive: true, force: true }) })

/** Injects the blob into a fresh copy of node in a child process; its stderr. */
function inject (name, code) {
  const file = path.join(dir, name)
  fs.copyFileSync(process.execPath, file)
  fs.chmodSync(file, 0o755)
  const r = spawnSync(process.execPath, ['-e', code, file, path.join(dir, 'blob')], { cwd: ROOT, encoding: 'utf8', timeout: 60000 })
  expect(r.status).toBe(0)
  return { file, stderr: r.stderr }
}

;(linux ? test : test.skip)('the build injects without LIEF\'s section-name warnings, and the executable runs', () => {
  const raw = inject('raw', `require('postject').inject(process.argv[1], 'NODE_SEA_BLOB', require('fs').readFileSync(process.argv[2]), { sentinelFuse: '${SEA_FUSE}' })`)
  // the warnings exist: what the build used to print
  expect(raw.stderr).toMatch(/^warning: Can't find string offset for section name '\.note(\.\d+)?'$/m)
  const built = inject('built', 'require(\'./scripts/build-exe\').injectBlob(process.argv[1], require(\'fs\').readFileSync(process.argv[2]))')
  expect(built.stderr).toBe('')
  expect(execFileSync(built.file, { encoding: 'utf8' })).toBe('sea says hi\n')
}, 60000)
