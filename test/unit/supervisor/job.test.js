'use strict'

// The supervisor's job object on Windows (src/supervisor/job.js over the addon's
// jobKillOnClose): made before anything starts; when it cannot be, a warning says what
// is lost; off Windows there is nothing to do.

const { containProcessTree } = require('../../../src/supervisor/job')
const { createFakeAddon } = require('../../helpers/fake-addon')

function logger () {
  const records = []
  const log = (level) => (obj, msg) => records.push({ level, ...obj, msg })
  return { records, logger: { debug: log('debug'), warn: log('warn'), info: log('info') } }
}

test('on Windows the supervisor enters a kill-on-close job', () => {
  const addon = createFakeAddon()
  const { records, logger: l } = logger()
  expect(containProcessTree({ logger: l, platform: 'win32', loadNative: () => addon })).toBe(true)
  expect(addon.job.calls).toBe(1)
  expect(records).toEqual([expect.objectContaining({ level: 'debug', event: 'job' })])
})

test('a job that cannot be made (Win32 5) is a warning naming the call and what it means', () => {
  const addon = createFakeAddon()
  addon.job.code = 5
  const { records, logger: l } = logger()
  expect(containProcessTree({ logger: l, platform: 'win32', loadNative: () => addon })).toBe(false)
  expect(records[0]).toMatchObject({ level: 'warn', event: 'job', code: 5, syscall: 'AssignProcessToJobObject' })
  expect(records[0].msg).toMatch(/may outlive a supervisor that is killed outright/)
})

test('no addon: a warning; not Windows: nothing at all', () => {
  const { records, logger: l } = logger()
  expect(containProcessTree({ logger: l, platform: 'win32', loadNative: () => { throw Object.assign(new Error('x'), { code: 'ERR_HTTPSYS_NATIVE_UNAVAILABLE' }) } })).toBe(false)
  expect(records[0]).toMatchObject({ level: 'warn', code: 'ERR_HTTPSYS_NATIVE_UNAVAILABLE' })
  expect(containProcessTree({ logger: l, platform: 'linux' })).toBe(null)
  expect(records).toHaveLength(1)
})
