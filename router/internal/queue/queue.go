// Package queue is a named request queue: the requests
// waiting for a worker, and the workers attached. As with HTTP.SYS, requests wait here
// while no worker can receive (none attached, or all out of receive credit) and a queue
// with no worker still queues: that is how a restarting app loses nothing. Only a full
// queue (queue_length) or a request that waited past queue_timeout is answered 503.
//
// Each queue has its own lock; nothing here takes a connection's lock, so a client
// connection may call in while holding its own (the order is connection, queue,
// worker: docs/router-control.md "Locks").
package queue

import (
	"sync"
	"sync/atomic"

	"httpsys/router/internal/cache"
)

// Entry is a request's queue-side state, embedded in the request; the queue's lock
// guards it.
type Entry struct {
	waiting bool
	arrived int64 // ms, the clock's
}

// Arrive stamps the time the request arrived (before it is enqueued).
func (e *Entry) Arrive(now int64) { e.arrived = now }

// Request is what a queue holds.
type Request interface {
	QueueEntry() *Entry
	// Aborted: the client went away; a queue skips it (it may read this without the
	// request's connection lock, so it is an atomic)
	Aborted() bool
}

// Worker is an attachment as the queue sees it. The queue calls these under its lock;
// a Worker takes only its own lock inside, never a queue's or a connection's.
type Worker interface {
	// CanTake: ready, not detaching, within its receive window
	CanTake() bool
	// TryDispatch hands r to the worker when it can receive (ready, not detaching,
	// within its receive window), else reports false
	TryDispatch(r Request) bool
	// Load is the requests in flight at the worker (the least loaded takes the next)
	Load() int
}

// Settings are a queue's limits.
type Settings struct {
	Length      int   // requests that may wait (503 beyond)
	TimeoutMs   int64 // a request waiting longer gets 503; 0: forever
	MaxBodySize int64 // 413 beyond; 0: no limit
}

// Queue is one named queue. Name and Settings do not change after New.
type Queue struct {
	Name     string
	Settings Settings
	// Cache is its app's part of the output cache, set before it is routed; nil when the
	// app's config or the router's limits turn the cache off
	Cache *cache.App

	mu          sync.Mutex
	waiting     deque[Request]
	nWaiting    int // live entries in waiting (aborted ones are skipped lazily)
	workers     []Worker
	rr          int
	unavailable bool
	deleted     bool

	served atomic.Uint64
}

// New returns an empty queue.
func New(name string, s Settings) *Queue {
	return &Queue{Name: name, Settings: s}
}

// Result of Enqueue.
type Result int

const (
	// Dispatched: a worker took the request (its REQUEST frame is on the way).
	Dispatched Result = iota
	// Waiting: the request waits for a worker.
	Waiting
	// Full: the queue holds queue_length requests; answer 503.
	Full
	// Down: no worker is attached and the app cannot come back without a command
	// (SetAvailable false); answer 503 at once rather than after queue_timeout.
	Down
	// Gone: the queue was deleted.
	Gone
)

// Enqueue gives r to a worker now, or lets it wait.
func (q *Queue) Enqueue(r Request) Result {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.deleted {
		return Gone
	}
	if q.unavailable && len(q.workers) == 0 {
		return Down
	}
	if q.nWaiting == 0 && q.dispatch(r) != nil {
		return Dispatched
	}
	if q.nWaiting >= q.Settings.Length {
		return Full
	}
	e := r.QueueEntry()
	e.waiting = true
	q.waiting.push(r)
	q.nWaiting++
	return Waiting
}

// RequeueFront puts back a request its worker never saw (it died before its ACK), in
// front, so the order is kept. False when the request went meanwhile or the queue is gone.
func (q *Queue) RequeueFront(r Request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.deleted || r.Aborted() {
		return false
	}
	r.QueueEntry().waiting = true
	q.waiting.unshift(r)
	q.nWaiting++
	return true
}

// Forget takes r out of the queue if it waits there (its client went away).
func (q *Queue) Forget(r Request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	e := r.QueueEntry()
	if !e.waiting {
		return false
	}
	e.waiting = false
	q.nWaiting--
	return true
}

// Holds reports whether r waits in q (not dispatched, not forgotten).
func (q *Queue) Holds(r Request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return r.QueueEntry().waiting
}

// Dispatch is a request a pump handed to a worker.
type Dispatch struct {
	R Request
	W Worker
}

// Pump hands waiting requests to workers while any can take one; it returns those it
// dispatched and where, for the caller to tell them with no queue lock held.
func (q *Queue) Pump() []Dispatch {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Dispatch
	for q.nWaiting > 0 && !q.deleted {
		r, ok := q.waiting.peek()
		if !ok {
			q.nWaiting = 0
			return out
		}
		e := r.QueueEntry()
		if !e.waiting || r.Aborted() {
			q.waiting.shift()
			if e.waiting {
				e.waiting = false
				q.nWaiting--
			}
			continue
		}
		w := q.dispatch(r)
		if w == nil {
			return out
		}
		q.waiting.shift()
		e.waiting = false
		q.nWaiting--
		out = append(out, Dispatch{r, w})
	}
	return out
}

// dispatch: pull model, as HTTP.SYS: only a worker with free receive credit takes a
// request; among those the least loaded, round robin on ties.
func (q *Queue) dispatch(r Request) Worker {
	ws := q.workers
	n := len(ws)
	if n == 1 {
		if ws[0].TryDispatch(r) {
			return ws[0]
		}
		return nil
	}
	// a worker may stop taking between the look and the dispatch (it detached or
	// died on its own goroutine): then the next best
	for tries := 0; tries < n; tries++ {
		best := -1
		bestLoad := int(^uint(0) >> 1)
		for k := range n {
			i := q.rr + k
			if i >= n {
				i -= n
			}
			if l := ws[i].Load(); l < bestLoad && ws[i].CanTake() {
				best, bestLoad = i, l
			}
		}
		if best < 0 {
			return nil
		}
		if ws[best].TryDispatch(r) {
			q.rr = best + 1
			if q.rr >= n {
				q.rr = 0
			}
			return ws[best]
		}
	}
	return nil
}

// Expire takes out the requests that waited longer than the queue timeout
// (HTTP.SYS's RequestQueue timer), for the caller to answer 503. Arrival order is
// queue order, so the scan stops at the first request still in time.
func (q *Queue) Expire(now, tick int64) []Request {
	if q.Settings.TimeoutMs <= 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Request
	// arrived is the coarse clock's, up to a tick early: never expire before the time
	limit := now - q.Settings.TimeoutMs - tick
	for {
		r, ok := q.waiting.peek()
		if !ok {
			break
		}
		e := r.QueueEntry()
		if e.waiting && e.arrived > limit {
			break
		}
		q.waiting.shift()
		if !e.waiting {
			continue
		}
		e.waiting = false
		q.nWaiting--
		out = append(out, r)
	}
	return out
}

// TakeWaiting removes every live waiting request, for the caller to answer.
func (q *Queue) TakeWaiting() []Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.takeWaiting()
}

func (q *Queue) takeWaiting() []Request {
	var out []Request
	for {
		r, ok := q.waiting.shift()
		if !ok {
			break
		}
		if e := r.QueueEntry(); e.waiting {
			e.waiting = false
			out = append(out, r)
		}
	}
	q.nWaiting = 0
	return out
}

// AddWorker attaches w; an attaching worker makes the app available again.
func (q *Queue) AddWorker(w Worker) {
	q.mu.Lock()
	q.unavailable = false
	q.workers = append(q.workers, w)
	q.mu.Unlock()
}

// RemoveWorker detaches w.
func (q *Queue) RemoveWorker(w Worker) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, x := range q.workers {
		if x == w {
			q.workers = append(q.workers[:i], q.workers[i+1:]...)
			break
		}
	}
	if q.rr >= len(q.workers) {
		q.rr = 0
	}
}

// SetAvailable says whether the app behind the queue can serve again by itself. While
// it cannot and no worker is attached, its waiting requests are returned for the caller
// to answer 503 and new ones get Down.
func (q *Queue) SetAvailable(available bool) []Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.unavailable = !available
	if q.unavailable && len(q.workers) == 0 {
		return q.takeWaiting()
	}
	return nil
}

// Delete marks the queue gone and returns its waiting requests and workers.
func (q *Queue) Delete() ([]Request, []Worker) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.deleted {
		return nil, nil
	}
	q.deleted = true
	ws := append([]Worker(nil), q.workers...)
	return q.takeWaiting(), ws
}

// Deleted reports whether Delete was called.
func (q *Queue) Deleted() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.deleted
}

// String is the queue's name (a URL conflict names its owner so).
func (q *Queue) String() string { return q.Name }

// Served counts a request whose response completed.
func (q *Queue) Served() { q.served.Add(1) }

// Stats is what queueStats answers of a queue (docs/router-control.md).
type Stats struct {
	Waiting int    `json:"waiting"`
	Served  uint64 `json:"served"`
	Workers int    `json:"-"`
}

// Stats reads the counters.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Stats{Waiting: q.nWaiting, Served: q.served.Load(), Workers: len(q.workers)}
}

// Workers is a copy of the attached workers, in attach order.
func (q *Queue) Workers() []Worker {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]Worker(nil), q.workers...)
}
