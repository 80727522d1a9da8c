'use strict'

// Watch mode: one chokidar watcher per app (not per instance: pm2's per-instance
// watchers give N x N restarts), a trailing debounce (each change restarts the quiet
// period, so saving ten files is one reload), and paths that must never trigger a
// reload: node_modules, dotfiles (.git), and every app's log_dir (an app logging into
// its own watched tree reloads for ever: pm2#1759). docs/supervisor.md 4.3.

const path = require('node:path')

/**
 * @param {string} pattern an ignore_watch entry: a path or a glob (*, **, ?), relative to cwd
 * @returns {(rel: string) => boolean} rel uses '/' separators, relative to cwd
 */
function compileIgnore (pattern) {
  const p = pattern.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '')
  const anywhere = !p.includes('/')
  if (!/[*?]/.test(p)) {
    return (rel) => rel === p || rel.startsWith(p + '/') || (anywhere && rel.split('/').includes(p))
  }
  let source = ''
  for (let i = 0; i < p.length; i++) {
    const c = p[i]
    if (c === '*' && p[i + 1] === '*') {
      // "**/" matches no directory as well as several
      if (p[i + 2] === '/') {
        source += '(?:.*/)?'
        i += 2
      } else {
        source += '.*'
        i++
      }
    } else if (c === '*') {
      source += '[^/]*'
    } else if (c === '?') {
      source += '[^/]'
    } else {
      source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
    }
  }
  const re = new RegExp(`^${source}(?:/.*)?$`)
  return (rel) => re.test(rel) || (anywhere && rel.split('/').some((seg) => re.test(seg)))
}

/**
 * The `ignored` function chokidar calls for every path it sees.
 * @param {object} app a validated app: cwd, watch, ignore_watch
 * @param {string[]} logDirs absolute directories written by the supervisor
 */
function ignoreFunction (app, logDirs) {
  const rules = app.ignore_watch.map(compileIgnore)
  const roots = app.watch
  return (file) => {
    const abs = path.resolve(file)
    for (const dir of logDirs) {
      if (abs === dir || abs.startsWith(dir + path.sep)) return true
    }
    const root = roots.find((r) => abs === r || abs.startsWith(r + path.sep))
    const fromRoot = root ? path.relative(root, abs).split(path.sep) : [path.basename(abs)]
    if (fromRoot.some((seg) => seg === 'node_modules' || (seg.startsWith('.') && seg.length > 1))) return true
    const rel = path.relative(app.cwd, abs).split(path.sep).join('/')
    return rules.some((rule) => rule(rel))
  }
}

class AppWatcher {
  /**
   * @param {object} app a validated app with a non-empty `watch`
   * @param {object} options
   * @param {string[]} [options.logDirs] never watched
   * @param {(files: string[]) => void} options.onChange after a burst, the files it touched
   * @param {import('pino').Logger} options.logger
   */
  constructor (app, { logDirs = [], onChange, logger }) {
    this.app = app
    this.logDirs = logDirs
    this.onChange = onChange
    this.logger = logger
    this.watcher = null
    this.timer = null
    this.changed = new Set()
  }

  /** @returns {Promise<void>} once the initial scan is done (changes count from then) */
  start () {
    const chokidar = require('chokidar')
    this.watcher = chokidar.watch(this.app.watch, {
      ignored: ignoreFunction(this.app, this.logDirs),
      ignoreInitial: true,
      persistent: true
    })
    this.watcher.on('all', (event, file) => this.onEvent(event, file))
    this.watcher.on('error', (err) => {
      this.logger.warn({ event: 'watch-error', app: this.app.name, err }, `watching failed: ${err.message}`)
    })
    return new Promise((resolve) => this.watcher.once('ready', resolve))
  }

  onEvent (event, file) {
    if (event === 'addDir') return // a new directory alone changes no code
    this.changed.add(path.relative(this.app.cwd, file) || file)
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.fire(), this.app.watch_delay)
  }

  fire () {
    this.timer = null
    const files = [...this.changed]
    this.changed.clear()
    this.onChange(files)
  }

  async close () {
    clearTimeout(this.timer)
    this.timer = null
    if (this.watcher) {
      const w = this.watcher
      this.watcher = null
      await w.close()
    }
  }
}

module.exports = { AppWatcher, compileIgnore, ignoreFunction }
