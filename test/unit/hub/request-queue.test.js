'use strict'

const { RequestQueue, Deque } = require('../../../src/hub/request-queue')
const { TICK } = require('../../../src/hub/clock')

// A stand-in for a worker connection: what the queue looks at is inFlight and canTake().
function fakeWorker (name, credit = Infinity) {
  return {
    name,
    credit,
    inFlight: 0,
    got: [],
    canTake () { return this.credit > 0 },
    dispatch (req) {
      this.credit--
      this.inFlight++
      this.got.push(req.n)
    }
  }
}

const req = (n) => ({ n, waiting: false, queue: null })

describe('request queue', () => {
  test('expire() takes out the requests that waited longer than queueTimeout, never early, skipping departed ones', () => {
    const q = new RequestQueue('q', { queueLength: 10, queueTimeout: 5000, maxBodySize: 10 })
    const at = (n, arrived) => ({ ...req(n), arrived })
    const reqs = [at(1, 0), at(2, 1000), at(3, 2000), at(4, 9000)]
    for (const r of reqs) q.enqueue(r)
    q.forget(reqs[1]) // its client went away
    // now() may be a tick behind the real time: nothing expires before timeout + tick
    expect(q.expire(5000 + TICK - 1)).toEqual([])
    expect(q.expire(7000 + TICK).map((r) => r.n)).toEqual([1, 3])
    expect(q.waitingCount).toBe(1)
    expect(reqs[0].waiting).toBe(false)
    const w = fakeWorker('a')
    q.addWorker(w)
    q.pump()
    expect(w.got).toEqual([4])
  })

  test('a queue without queueTimeout never expires anything', () => {
    const q = new RequestQueue('q', { queueLength: 10, maxBodySize: 10 })
    q.enqueue({ ...req(1), arrived: 0 })
    expect(q.expire(1e12)).toEqual([])
    expect(q.waitingCount).toBe(1)
  })

  test('with no worker requests wait, in order, up to queueLength', () => {
    const q = new RequestQueue('q', { queueLength: 3, maxBodySize: 10 })
    expect([1, 2, 3, 4].map((n) => q.enqueue(req(n)))).toEqual([true, true, true, false])
    expect(q.waitingCount).toBe(3)
    const w = fakeWorker('a')
    q.addWorker(w)
    q.pump()
    expect(w.got).toEqual([1, 2, 3])
    expect(q.waitingCount).toBe(0)
  })

  test('the worker with the fewest requests in flight gets the next one; ties go round-robin', () => {
    const q = new RequestQueue('q', { queueLength: 100, maxBodySize: 10 })
    const a = fakeWorker('a')
    const b = fakeWorker('b')
    const c = fakeWorker('c')
    q.addWorker(a)
    q.addWorker(b)
    q.addWorker(c)
    for (let n = 1; n <= 6; n++) q.enqueue(req(n))
    expect([a.got, b.got, c.got]).toEqual([[1, 4], [2, 5], [3, 6]])
    // b finishes its two: it is the least loaded now and gets the next two
    b.inFlight = 0
    q.enqueue(req(7))
    q.enqueue(req(8))
    expect(b.got).toEqual([2, 5, 7, 8])
  })

  test('a worker without receive credit is skipped; requests wait when nobody has credit', () => {
    const q = new RequestQueue('q', { queueLength: 100, maxBodySize: 10 })
    const a = fakeWorker('a', 1)
    const b = fakeWorker('b', 0)
    q.addWorker(a)
    q.addWorker(b)
    q.enqueue(req(1))
    q.enqueue(req(2))
    expect(a.got).toEqual([1])
    expect(b.got).toEqual([])
    expect(q.waitingCount).toBe(1)
    b.credit = 5
    q.pump()
    expect(b.got).toEqual([2])
  })

  test('requests that left while waiting are skipped; requeued ones go first', () => {
    const q = new RequestQueue('q', { queueLength: 100, maxBodySize: 10 })
    const r1 = req(1)
    const r2 = req(2)
    const r3 = req(3)
    q.enqueue(r1)
    q.enqueue(r2)
    q.enqueue(r3)
    q.forget(r2)
    expect(q.waitingCount).toBe(2)
    const back = req(0)
    q.requeueFront(back)
    const w = fakeWorker('a')
    q.addWorker(w)
    q.pump()
    expect(w.got).toEqual([0, 1, 3])
  })

  test('removing a worker keeps balancing among the rest', () => {
    const q = new RequestQueue('q', { queueLength: 100, maxBodySize: 10 })
    const a = fakeWorker('a')
    const b = fakeWorker('b')
    q.addWorker(a)
    q.addWorker(b)
    q.enqueue(req(1))
    q.removeWorker(a)
    q.enqueue(req(2))
    q.enqueue(req(3))
    expect(b.got.length + a.got.length).toBe(3)
    expect(a.got.length).toBeLessThanOrEqual(1)
  })

  test('takeWaiting empties the queue of live requests only', () => {
    const q = new RequestQueue('q', { queueLength: 100, maxBodySize: 10 })
    const rs = [req(1), req(2), req(3)]
    for (const r of rs) q.enqueue(r)
    q.forget(rs[1])
    expect(q.takeWaiting().map((r) => r.n)).toEqual([1, 3])
    expect(q.waitingCount).toBe(0)
  })
})

describe('Deque', () => {
  test('keeps FIFO order across many shifts, unshifts and compactions', () => {
    const d = new Deque()
    const model = []
    for (let i = 0; i < 5000; i++) {
      if (i % 3 === 2) {
        expect(d.shift()).toBe(model.shift())
      } else if (i % 7 === 0) {
        d.unshift(-i)
        model.unshift(-i)
      } else {
        d.push(i)
        model.push(i)
      }
      expect(d.size).toBe(model.length)
    }
    expect(d.drain()).toEqual(model)
    expect(d.size).toBe(0)
  })
})
