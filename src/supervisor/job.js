'use strict'

// Windows: nothing an app starts outlives its supervisor. The supervisor puts itself in
// a job object that kills every process in it when the supervisor ends, however it
// ends (the addon's jobKillOnClose, native/src/job.cc); the processes it starts, and
// theirs, are in the job from birth and none may break away. (libuv's own job kills
// only the supervisor's children: it lets their children break away.) POSIX needs no
// such thing: each worker leads a process group the supervisor kills, and the preload
// takes its group down when the supervisor disappears (docs/architecture.md 7).

/**
 * @param {object} options
 * @param {import('pino').Logger} options.logger
 * @param {string} [options.platform=process.platform]
 * @param {() => object} [options.loadNative] loads the addon or throws
 * @returns {boolean|null} null off Windows; whether the job is in place
 */
function containProcessTree ({ logger, platform = process.platform, loadNative } = {}) {
  if (platform !== 'win32') return null
  let addon
  try {
    addon = (loadNative || (() => require('../httpsys/loader').load({ platform })))()
  } catch (err) {
    logger.warn({ event: 'job', code: err.code }, 'the HTTP.SYS addon does not load, so there is no job object: a process an app starts may outlive a supervisor that is killed outright')
    return false
  }
  if (typeof addon.jobKillOnClose !== 'function') return false
  const r = addon.jobKillOnClose()
  if (r.code !== 0) {
    logger.warn({ event: 'job', code: r.code, syscall: r.syscall },
      `no job object (${r.syscall} failed, Win32 ${r.code}): a process an app starts may outlive a supervisor that is killed outright`)
    return false
  }
  logger.debug({ event: 'job' }, 'every process this supervisor starts, and theirs, ends with it (a job object)')
  return true
}

module.exports = { containProcessTree }
