'use strict'

// The native router (router/, issue 25) in the npm package, the way esbuild ships its
// binary: one package per platform (httpsys-router-<platform>-<arch>) holding only
// bin/httpsys-router, with `os` and `cpu` so npm installs just the one that fits, and
// the main package naming them all in optionalDependencies. src/supervisor/router-binary.js
// finds the installed one. Binaries are never committed: `npm pack` builds them.
//
//   node scripts/router-packages.js build     (prepack) every platform's package into
//       build/npm/<name>/ and its tarball into build/npm/; then package.json gets the
//       optionalDependencies (and loses the checkout's prepare script), so the packed
//       (or published) package.json names them
//   node scripts/router-packages.js restore   (postpack, postpublish) puts package.json
//       back: the checkout's never has them, so its `npm install` asks the registry for
//       nothing of ours. `npm publish` re-reads package.json after
//       packing to send it to the registry, so under publish postpack leaves them for
//       postpublish.
//
// HTTPSYS_PACK_ROUTERS=win32-x64,linux-x64 builds only those platforms' packages (a
// test that packs for one platform: each cold Go build of the router takes a minute on
// a small machine); package.json still names them all. A release packs without it.
//
// Publishing: the platform packages first (`npm publish build/npm/<name>-<version>.tgz`
// for each), then the main one (docs/single-executable.md "Packaging").

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { buildRouter } = require('./build-router')
const { PLATFORMS, packageName, fileName } = require('../src/supervisor/router-binary')

const ROOT = path.join(__dirname, '..')
const OUT = path.join(ROOT, 'build', 'npm')
const PACKAGE_JSON = path.join(ROOT, 'package.json')

/** The platform package's package.json: the main package's version, license and repository. */
function manifest (main, platform, arch) {
  const m = {
    name: packageName(platform, arch),
    version: main.version,
    description: `The native router of httpsys-cli (${main.name}) for ${platform}-${arch}. Installed by httpsys-cli as an optional dependency; not meant to be installed by hand.`,
    license: main.license,
    os: [platform],
    cpu: [arch],
    files: ['bin/'],
    // Yarn PnP: an executable has to be on disk, not in a zip
    preferUnplugged: true
  }
  if (main.repository) m.repository = main.repository
  return m
}

/**
 * Builds every platform's package (Go, cgo off) and packs each.
 * @param {object} [options]
 * @param {string} [options.out] default build/npm
 * @returns {string[]} the tarballs
 */
function build ({ out = OUT } = {}) {
  const main = readJson(PACKAGE_JSON)
  fs.rmSync(out, { recursive: true, force: true })
  const dirs = []
  const only = process.env.HTTPSYS_PACK_ROUTERS ? process.env.HTTPSYS_PACK_ROUTERS.split(',').map((t) => t.trim()) : null
  const unknown = only === null ? [] : only.filter((t) => !PLATFORMS.includes(t))
  if (unknown.length > 0) throw new Error(`HTTPSYS_PACK_ROUTERS names ${unknown.join(', ')}: the platforms are ${PLATFORMS.join(', ')}`)
  for (const target of PLATFORMS) {
    if (only !== null && !only.includes(target)) continue
    const [platform, arch] = target.split('-')
    const dir = path.join(out, packageName(platform, arch))
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true })
    const r = buildRouter({ out: path.join(dir, 'bin', fileName(platform)), platform, arch, stdio: 'pipe' })
    if (!r.ok) throw new Error(r.message)
    writeJson(path.join(dir, 'package.json'), manifest(main, platform, arch))
    fs.writeFileSync(path.join(dir, 'README.md'),
      `# ${packageName(platform, arch)}\n\nThe native router of [httpsys-cli](https://www.npmjs.com/package/httpsys-cli) for ${platform}-${arch}, ` +
      'built from its `router/` (Go, cgo off). httpsys-cli installs it as an optional dependency: install httpsys-cli, not this.\n')
    dirs.push(dir)
  }
  // the scripts npm runs here are the main package's (none in these)
  const said = execFileSync('npm', ['pack', '--silent', '--pack-destination', out, ...dirs], { cwd: out, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  return said.trim().split('\n').map((f) => path.join(out, f.trim()))
}

// The checkout's prepare script (scripts/install-router.js): it builds the router in a
// checkout and means nothing in the package, where npm 11 would list it among the
// install scripts a user has to allow. So the packed package.json is without it.
const PREPARE = 'node scripts/install-router.js'

/**
 * package.json as packed: the platform packages as optionalDependencies, at its own
 * version, and no prepare script.
 */
function forPacking () {
  const main = readJson(PACKAGE_JSON)
  const optional = { ...(main.optionalDependencies || {}) }
  for (const target of PLATFORMS) optional[packageName(...target.split('-'))] = main.version
  main.optionalDependencies = optional
  if (main.scripts && main.scripts.prepare === PREPARE) delete main.scripts.prepare
  writeJson(PACKAGE_JSON, main)
}

/** package.json as the checkout has it: none of the platform packages, its prepare script (before prepack). */
function forCheckout () {
  const main = readJson(PACKAGE_JSON)
  if (main.optionalDependencies) {
    for (const target of PLATFORMS) delete main.optionalDependencies[packageName(...target.split('-'))]
    if (Object.keys(main.optionalDependencies).length === 0) delete main.optionalDependencies
  }
  if (main.scripts && main.scripts.prepare === undefined) {
    const scripts = {}
    for (const [k, v] of Object.entries(main.scripts)) {
      if (k === 'prepack') scripts.prepare = PREPARE
      scripts[k] = v
    }
    if (scripts.prepare === undefined) scripts.prepare = PREPARE
    main.scripts = scripts
  }
  writeJson(PACKAGE_JSON, main)
}

function readJson (file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'))
}

// npm's own layout: two spaces, a final newline (so a round trip changes no byte)
function writeJson (file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n')
}

if (require.main === module) {
  const cmd = process.argv[2]
  try {
    if (cmd === 'build') {
      const tgz = build()
      forPacking()
      console.error(`router-packages: ${tgz.map((f) => path.relative(ROOT, f)).join(', ')}`)
    } else if (cmd === 'restore') {
      // npm publish sends package.json as it is after postpack: postpublish restores it
      if (process.env.npm_lifecycle_event === 'postpack' && process.env.npm_command === 'publish') process.exit(0)
      forCheckout()
    } else {
      throw new Error('usage: node scripts/router-packages.js build|restore')
    }
  } catch (err) {
    console.error(`router-packages: ${err.message}`)
    process.exit(1)
  }
}

module.exports = { build, forPacking, forCheckout, manifest, OUT, PREPARE }
