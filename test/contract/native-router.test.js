'use strict'

// The contract suite against the native router (router/, issue 25), through the hub
// client: the same worker side as the hub's (test/contract/hub.test.js), attached to
// the Go router over the same wire. Features the native router does not serve yet are
// said here, so their tests show as skipped.

const { startNativeRouter } = require('../helpers/native-router')
const hubClient = require('../../src/queue/hub-client')
const { createHttpClient } = require('./http-client')
const { runContract } = require('./run-in-jest')

jest.setTimeout(30000)

const FEATURES = { window: true, cancelResets: true, sharedQueue: true, routerRules: true, largeBodies: true, expect: true, closeHonoured: true, disconnectNotice: true, closeAnswersPending: true, absoluteForm: true }

runContract('the native router', FEATURES, async () => {
  const router = await startNativeRouter()
  const attachments = []
  let client = null
  let sharedUrls = null
  return {
    name: 'native',
    async attach ({ handlers, shared = false }) {
      const urls = shared && sharedUrls !== null ? sharedUrls : ['http://127.0.0.1:0/']
      const a = await hubClient.attach({ socketPath: router.socketPath, handlers, urls, queue: shared ? 'contract' : undefined })
      attachments.push(a)
      if (shared) sharedUrls = a.info.urls
      if (client === null) client = createHttpClient(a.info.ports[0])
      return a
    },
    request: (r) => client(r),
    async cleanup () {
      if (client !== null) client.close()
      for (const a of attachments) a.close()
      await router.close()
    }
  }
})
