'use strict'

// The import directions of docs/architecture.md 2, checked on the source: no folder
// loop, the wire below the worker side (src/queue; the router side was src/hub, now the
// Go router), and src/config free of the supervisor. A require() that breaks
// them fails here with the file that made it.

const fs = require('node:fs')
const path = require('node:path')

const SRC = path.join(__dirname, '..', '..', 'src')

/** src-relative unit of a file: its folder under src/, or the file for top-level modules. */
function unitOf (file) {
  const rel = path.relative(SRC, file).split(path.sep)
  return rel.length === 1 ? rel[0].replace(/\.js$/, '') : rel[0]
}

function filesUnder (dir) {
  const out = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(p))
    else if (entry.name.endsWith('.js')) out.push(p)
  }
  return out
}

/** unit -> Map(unit it requires -> first file that does) */
function graph () {
  const edges = new Map()
  for (const file of filesUnder(SRC)) {
    const from = unitOf(file)
    if (!edges.has(from)) edges.set(from, new Map())
    const text = fs.readFileSync(file, 'utf8')
    for (const m of text.matchAll(/require\('(\.{1,2}\/[^']+)'\)/g)) {
      const target = path.resolve(path.dirname(file), m[1])
      if (!target.startsWith(SRC + path.sep)) continue
      const to = unitOf(fs.existsSync(target + '.js') ? target + '.js' : target)
      if (to !== from && !edges.get(from).has(to)) edges.get(from).set(to, path.relative(SRC, file))
    }
  }
  return edges
}

const FORBIDDEN = {
  'tls-material': ['wire', 'queue', 'http', 'supervisor', 'config', 'cli', 'setup', 'preload', 'register', 'service', 'cache'],
  cache: ['wire', 'queue', 'http', 'supervisor', 'config', 'cli', 'setup', 'preload', 'register', 'service'],
  wire: ['queue', 'http', 'supervisor', 'config', 'cli', 'setup', 'preload', 'register', 'service'],
  queue: ['http', 'supervisor', 'config', 'cli', 'setup', 'preload', 'register', 'service'],
  // the addon's JS layer: below the worker's attachment (src/queue/httpsys), the supervisor, setup and service
  httpsys: ['wire', 'cache', 'queue', 'http', 'supervisor', 'config', 'cli', 'setup', 'preload', 'register', 'service'],
  http: ['supervisor', 'config', 'cli', 'setup', 'preload', 'register', 'service'],
  config: ['supervisor', 'queue', 'http', 'cli', 'setup', 'preload', 'register', 'service'],
  supervisor: ['cli', 'setup', 'preload', 'register', 'service'],
  setup: ['cli', 'supervisor', 'preload', 'register', 'service'],
  // service runs the supervisor and uses setup (reservations for its account); nothing runs it but the CLI
  service: ['cli', 'preload', 'register', 'http']
}

test('no unit imports what the architecture forbids', () => {
  const broken = []
  for (const [from, deps] of graph()) {
    for (const [to, file] of deps) {
      if ((FORBIDDEN[from] || []).includes(to)) broken.push(`${file} (${from}) requires ${to}`)
    }
  }
  expect(broken).toEqual([])
})

test('the folders of src/ import each other without a loop', () => {
  const edges = graph()
  const loops = []
  const state = new Map()
  const visit = (unit, trail) => {
    if (state.get(unit) === 'done') return
    if (state.get(unit) === 'open') {
      loops.push([...trail.slice(trail.indexOf(unit)), unit].join(' -> '))
      return
    }
    state.set(unit, 'open')
    for (const to of (edges.get(unit) || new Map()).keys()) visit(to, [...trail, unit])
    state.set(unit, 'done')
  }
  for (const unit of edges.keys()) visit(unit, [])
  expect(loops).toEqual([])
})
