'use strict'

// The contract suite against the hub, through the hub client: the backend every
// supervised and standalone app uses on Linux and macOS.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const pino = require('pino')
const { Hub } = require('../../src/hub')
const hubClient = require('../../src/queue/hub-client')
const { createHttpClient } = require('./http-client')
const { runContract } = require('./run-in-jest')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-contract-'))
let seq = 0

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const FEATURES = { window: true, cancelResets: true, sharedQueue: true, routerRules: true, largeBodies: true, expect: true, closeHonoured: true, disconnectNotice: true, closeAnswersPending: true, absoluteForm: true }

runContract('the hub', FEATURES, async () => {
  const socketPath = path.join(dir, `hub-${++seq}.sock`)
  const hub = new Hub({ socketPath, logger: pino({ level: 'silent' }) })
  await hub.start()
  const attachments = []
  let client = null
  let sharedUrls = null
  const env = {
    name: 'hub',
    async attach ({ handlers, shared = false }) {
      const urls = shared && sharedUrls !== null ? sharedUrls : ['http://127.0.0.1:0/']
      const a = await hubClient.attach({ socketPath, handlers, urls, queue: shared ? 'contract' : undefined })
      attachments.push(a)
      if (shared) sharedUrls = a.info.urls
      if (client === null) client = createHttpClient(a.info.ports[0])
      return a
    },
    request: (r) => client(r),
    async cleanup () {
      if (client !== null) client.close()
      for (const a of attachments) a.close()
      await hub.close()
    }
  }
  return env
})
