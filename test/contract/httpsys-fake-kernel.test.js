'use strict'

// The contract suite against the HTTP.SYS backend's JavaScript (src/queue/httpsys) over
// the fake addon with a simulated kernel. The same suite runs against the real addon
// in Windows node.exe under Wine (test/windows).

const { createBackend } = require('../../src/queue/httpsys')
const { createFakeAddon } = require('../helpers/fake-addon')
const { createFakeKernel } = require('../helpers/fake-kernel')
const { runContract } = require('./run-in-jest')

const FEATURES = { window: true, cancelResets: true, sharedQueue: true, routerRules: true, largeBodies: true, expect: true, closeHonoured: true, disconnectNotice: true, closeAnswersPending: true, absoluteForm: true }

runContract('HTTP.SYS backend over a simulated kernel', FEATURES, async () => {
  const kernel = createFakeKernel()
  const addon = createFakeAddon({ kernel })
  const backend = createBackend(() => addon)
  const attachments = []
  return {
    name: 'httpsys-fake',
    async attach ({ handlers, shared = false }) {
      const a = await backend.attach({ urls: ['http://+:8080/'], queue: shared ? 'contract' : undefined, handlers })
      attachments.push(a)
      return a
    },
    request: (r) => kernel.request(r),
    async cleanup () {
      for (const a of attachments) a.close()
    }
  }
})
