'use strict'

// Issue 24, defect 5: what empties HTTP.SYS's kernel response cache of an app's old
// build. HTTP.SYS removes only the entries the calling process cached
// (docs/output-cache.md "Invalidation on HTTP.SYS"), which the fake addon models:
// queue.cached() is what HTTP.SYS holds from that handle's process. The supervisor's
// flush runs on the controller's handle and so cannot empty a worker's entries; the
// worker flushes its own before its handle closes.

const { createBackend } = require('../../../src/queue/httpsys')
const { createFakeAddon, fakeRequest, EVENT } = require('../../helpers/fake-addon')

const QUEUE = 'httpsys-1-web'
const PREFIX = 'http://+:8080/'

function handlers () {
  return { onRequest () {}, onBody () {}, onBodyEnd () {}, onAbort () {}, onDrain () {}, onClose () {} }
}

async function setup (create = createBackend) {
  const addon = createFakeAddon()
  const backend = create(() => addon)
  const controller = backend.createQueue(QUEUE, { urls: [PREFIX] })
  process.env.HTTPSYS_QUEUE_URLS = PREFIX
  let attachment
  try {
    attachment = await backend.attach({ queue: QUEUE, handlers: handlers() })
  } finally {
    delete process.env.HTTPSYS_QUEUE_URLS
  }
  const worker = addon.queues[addon.queues.length - 1]
  return { addon, controller, attachment, worker }
}

/** A GET the worker answers with a time to live, as src/http does for a cacheable one. */
function answerCacheable (attachment, worker, id) {
  worker.emit([EVENT.REQUEST, id, fakeRequest(id, { url: '/static/x' })])
  const body = JSON.stringify({ build: 'old' })
  attachment.respond(id, 200, 'OK', ['Content-Type', 'application/json', 'Content-Length', String(body.length)], body, 0, 60)
}

test('a worker that leaves (reload, restart, stop) takes its cached responses out of HTTP.SYS\'s cache first', async () => {
  const { controller, attachment, worker } = await setup()
  expect(worker.info().urls).toEqual([]) // it opened the controller's queue and registered nothing
  answerCacheable(attachment, worker, 1)
  worker.emit([EVENT.SENT, 1, 0])
  expect(worker.cached()).toEqual([1])

  // what the supervisor does when an instance exits: its handle holds none of them
  controller.flushCache()
  expect(worker.cached()).toEqual([1])

  attachment.close()
  // the old build's response is gone from the kernel cache once the worker has closed
  expect(worker.cached()).toEqual([])
  const calls = worker.calls.map((c) => c[0])
  expect(worker.callsOf('flushCache')).toEqual([[[PREFIX]]])
  expect(calls.indexOf('flushCache')).toBeLessThan(calls.indexOf('close'))
})

test('a response the kernel finishes sending during the drain is flushed too: the flush comes after the last send', async () => {
  const { attachment, worker } = await setup()
  answerCacheable(attachment, worker, 1)
  attachment.close()
  // still in the kernel: neither flushed nor closed yet
  expect(worker.callsOf('flushCache')).toEqual([])
  expect(worker.closed).toBe(false)
  worker.emit([EVENT.SENT, 1, 0])
  expect(worker.cached()).toEqual([])
  expect(worker.closed).toBe(true)
})

test('an app that ends with process.exit() (its server never closed) still takes its cached responses out', async () => {
  // a fresh copy of the backend: its exit hook is added once per process
  let fresh
  jest.isolateModules(() => { fresh = require('../../../src/queue/httpsys').createBackend })
  const before = new Set(process.listeners('exit'))
  const { attachment, worker } = await setup(fresh)
  answerCacheable(attachment, worker, 1)
  worker.emit([EVENT.SENT, 1, 0])
  // what node runs on process.exit(): the hook the attachment added (called here, not
  // through process.emit, which would reach jest's own listeners)
  const added = process.listeners('exit').filter((l) => !before.has(l))
  expect(added).toHaveLength(1)
  added[0]()
  process.off('exit', added[0])
  expect(worker.cached()).toEqual([])
  expect(worker.callsOf('flushCache')).toEqual([[[PREFIX]]])
})

test('a worker that never sent a cacheable response closes without a flush', async () => {
  const { attachment, worker } = await setup()
  worker.emit([EVENT.REQUEST, 1, fakeRequest(1)])
  attachment.respond(1, 200, 'OK', ['Content-Length', '2'], 'ok', 0, 0)
  worker.emit([EVENT.SENT, 1, 0])
  attachment.close()
  expect(worker.closed).toBe(true)
  expect(worker.callsOf('flushCache')).toEqual([])
})

test('flushCache() while attached empties this process\'s entries under the queue\'s prefixes (0), and is 6 once closed', async () => {
  const { attachment, worker } = await setup()
  answerCacheable(attachment, worker, 1)
  worker.emit([EVENT.SENT, 1, 0])
  expect(attachment.flushCache()).toBe(0)
  expect(worker.cached()).toEqual([])
  attachment.close()
  expect(attachment.flushCache()).toBe(6)
})
