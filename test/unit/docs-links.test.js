'use strict'

// Every markdown file the project points at exists, and every numbered section a
// citation names ("docs/supervisor.md 2.5") is a heading of that file. Scanned: the
// README, docs/*.md, and the .js/.cc/.h files of src/, native/, test/, scripts/ and
// bench/. A reference resolves against the repository root, the referencing file's
// folder, or (a bare name such as architecture.md) docs/. Citations of the research
// notes the code was first written from ("research/...", "research 2.1") are errors:
// those notes are not part of the project, docs/ is.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const DIRS = ['src', 'native', 'test', 'scripts', 'bench']
const EXTS = new Set(['.js', '.cc', '.h'])

// a path-like token ending in .md, not in the middle of a longer path or a URL
const MD_REF = /(?<![\w./-])[\w.-][\w./-]*\.md\b/g
// section numbers right after a reference: "x.md 2.1, 2.2", "x.md section 4", "x.md 2.3 to 2.5"
const SECTIONS = /^(?:,?\s+(?:section\s+|to\s+|and\s+)?\d+(?:\.\d+)*\b)+/
// a line that names a markdown file it writes (an output, not a document) ends with this
const NOT_A_REFERENCE = '// an output file, not a reference'
const RESEARCH = /\bresearch(?:\/[\w./-]*|\s+(?:section\s+)?\d[\d.]*)/gi

function filesToScan () {
  const files = [path.join(ROOT, 'README.md')]
  for (const f of fs.readdirSync(path.join(ROOT, 'docs'))) {
    if (f.endsWith('.md')) files.push(path.join(ROOT, 'docs', f))
  }
  const walk = (dir) => {
    if (!fs.existsSync(dir)) return
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (EXTS.has(path.extname(entry.name)) && full !== __filename) files.push(full)
    }
  }
  for (const d of DIRS) walk(path.join(ROOT, d))
  return files
}

const headingCache = new Map()
/** The numbered section headings of a markdown file ("## 2. ...", "### 2.1 ..."). */
function sectionsOf (file) {
  if (!headingCache.has(file)) {
    const found = new Set()
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s/gm)) found.add(m[1])
    headingCache.set(file, found)
  }
  return headingCache.get(file)
}

function resolveRef (ref, fromFile) {
  const candidates = [path.resolve(ROOT, ref), path.resolve(path.dirname(fromFile), ref)]
  if (!ref.includes('/')) candidates.push(path.join(ROOT, 'docs', ref))
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile()) || null
}

/**
 * @param {string} text the file's contents
 * @param {string} file its absolute path (references resolve from its folder)
 * @returns {string[]} one "file:line: problem" per bad reference
 */
function checkText (text, file) {
  const problems = []
  const rel = path.relative(ROOT, file)
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    const where = `${rel}:${i + 1}`
    if (line.endsWith(NOT_A_REFERENCE)) return
    for (const m of line.matchAll(RESEARCH)) {
      problems.push(`${where}: cites the research notes (${m[0].replace(/\.$/, '')}); cite docs/ instead`)
    }
    for (const m of line.matchAll(MD_REF)) {
      const ref = m[0]
      const start = m.index
      if (ref.startsWith('//') || line[start - 1] === ':') continue // a URL
      if (/(^|\/)research\//.test(ref)) continue // reported above
      const target = resolveRef(ref, file)
      if (target === null) {
        problems.push(`${where}: ${ref} does not exist`)
        continue
      }
      // "[x.md](x.md) 2.1" cites a section after a markdown link too
      let after = line.slice(start + ref.length)
      if (line.slice(start - 2, start) === '](' && after.startsWith(')')) after = after.slice(1)
      const cited = SECTIONS.exec(after)
      if (cited === null) continue
      const known = sectionsOf(target)
      for (const n of cited[0].match(/\d+(?:\.\d+)*/g)) {
        if (!known.has(n)) problems.push(`${where}: ${ref} has no section ${n}`)
      }
    }
  })
  return problems
}

describe('references to markdown files', () => {
  test('the checker finds what it must (a missing file, a missing section, the research notes)', () => {
    const file = path.join(ROOT, 'src', 'example.js')
    const text = [
      '// fine: docs/wire-protocol.md, architecture.md, ../README.md, https://example.com/x/NOPE.md',
      '// missing: docs/nope.md',
      '// (docs/supervisor.md 2.1, 9.9)',
      '// (research/supervisors.md 2.1) and (research 3.2)'
    ].join('\n')
    expect(checkText(text, file)).toEqual([
      'src/example.js:2: docs/nope.md does not exist',
      'src/example.js:3: docs/supervisor.md has no section 9.9',
      'src/example.js:4: cites the research notes (research/supervisors.md); cite docs/ instead',
      'src/example.js:4: cites the research notes (research 3.2); cite docs/ instead'
    ])
  })

  test('every referenced markdown file and cited section exists', () => {
    const problems = []
    for (const file of filesToScan()) problems.push(...checkText(fs.readFileSync(file, 'utf8'), file))
    expect(problems).toEqual([])
  })
})
