package queue

import (
	"sync"
	"testing"
)

type req struct {
	e       Entry
	name    string
	aborted bool
}

func (r *req) QueueEntry() *Entry { return &r.e }
func (r *req) Aborted() bool      { return r.aborted }

// worker takes requests while it has credit; Load is what it holds.
type worker struct {
	mu     sync.Mutex
	credit int
	got    []string
}

func (w *worker) CanTake() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.credit > 0 }
func (w *worker) Load() int     { w.mu.Lock(); defer w.mu.Unlock(); return len(w.got) }
func (w *worker) TryDispatch(r Request) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.credit == 0 {
		return false
	}
	w.credit--
	w.got = append(w.got, r.(*req).name)
	return true
}

func names(rs []Request) (out []string) {
	for _, r := range rs {
		out = append(out, r.(*req).name)
	}
	return out
}

func dispatched(ds []Dispatch) (out []string) {
	for _, d := range ds {
		out = append(out, d.R.(*req).name)
	}
	return out
}

func TestRequestsWaitWithoutAWorkerAndGoInOrderOnceOneCanTake(t *testing.T) {
	q := New("a", Settings{Length: 10})
	for _, n := range []string{"1", "2", "3"} {
		if got := q.Enqueue(&req{name: n}); got != Waiting {
			t.Fatalf("enqueue %s without a worker: %v, want Waiting", n, got)
		}
	}
	w := &worker{credit: 2}
	q.AddWorker(w)
	if got := dispatched(q.Pump()); len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Fatalf("pump dispatched %v, want [1 2]", got)
	}
	if s := q.Stats(); s.Waiting != 1 {
		t.Fatalf("waiting %d, want 1", s.Waiting)
	}
}

func TestAFullQueueSays503AndAnAbortedRequestIsSkipped(t *testing.T) {
	q := New("a", Settings{Length: 2})
	a, b := &req{name: "a"}, &req{name: "b"}
	q.Enqueue(a)
	q.Enqueue(b)
	if got := q.Enqueue(&req{name: "c"}); got != Full {
		t.Fatalf("third request in a queue of 2: %v, want Full", got)
	}
	a.aborted = true
	q.Forget(a)
	w := &worker{credit: 5}
	q.AddWorker(w)
	q.Pump()
	if len(w.got) != 1 || w.got[0] != "b" {
		t.Fatalf("worker got %v, want [b]", w.got)
	}
}

func TestTheLeastLoadedWorkerThatCanTakeGetsTheRequestRoundRobinOnTies(t *testing.T) {
	q := New("a", Settings{Length: 10})
	w1, w2, w3 := &worker{credit: 10}, &worker{credit: 10}, &worker{credit: 0}
	q.AddWorker(w1)
	q.AddWorker(w2)
	q.AddWorker(w3)
	for i := 0; i < 4; i++ {
		if got := q.Enqueue(&req{name: "r"}); got != Dispatched {
			t.Fatalf("enqueue: %v", got)
		}
	}
	if len(w1.got) != 2 || len(w2.got) != 2 || len(w3.got) != 0 {
		t.Fatalf("loads %d %d %d, want 2 2 0", len(w1.got), len(w2.got), len(w3.got))
	}
}

func TestARequeuedRequestGoesFirstKeepingTheOrder(t *testing.T) {
	q := New("a", Settings{Length: 10})
	q.Enqueue(&req{name: "later"})
	// a dead worker's unseen requests come back last to first
	q.RequeueFront(&req{name: "2"})
	q.RequeueFront(&req{name: "1"})
	w := &worker{credit: 10}
	q.AddWorker(w)
	q.Pump()
	if got := w.got; len(got) != 3 || got[0] != "1" || got[1] != "2" || got[2] != "later" {
		t.Fatalf("order %v, want [1 2 later]", got)
	}
}

func TestExpireTakesWhatWaitedPastTheTimeout(t *testing.T) {
	q := New("a", Settings{Length: 10, TimeoutMs: 1000})
	old, fresh := &req{name: "old"}, &req{name: "fresh"}
	old.e.Arrive(0)
	fresh.e.Arrive(5000)
	q.Enqueue(old)
	q.Enqueue(fresh)
	if got := names(q.Expire(2500, 1000)); len(got) != 1 || got[0] != "old" {
		t.Fatalf("expired %v, want [old]", got)
	}
	if got := q.Expire(2500, 1000); len(got) != 0 {
		t.Fatalf("expired again %v", names(got))
	}
}

func TestAnAppThatCannotComeBackAnswersAtOnce(t *testing.T) {
	q := New("a", Settings{Length: 10})
	q.Enqueue(&req{name: "w"})
	if got := names(q.SetAvailable(false)); len(got) != 1 {
		t.Fatalf("SetAvailable(false) returned %v, want the waiting request", got)
	}
	if got := q.Enqueue(&req{name: "x"}); got != Down {
		t.Fatalf("enqueue while down: %v, want Down", got)
	}
	q.AddWorker(&worker{credit: 1})
	if got := q.Enqueue(&req{name: "y"}); got != Dispatched {
		t.Fatalf("enqueue once a worker attached: %v, want Dispatched", got)
	}
}

func TestDeleteHandsBackWaitingRequestsAndWorkers(t *testing.T) {
	q := New("a", Settings{Length: 10})
	q.Enqueue(&req{name: "w"})
	w := &worker{}
	q.AddWorker(w)
	waiting, workers := q.Delete()
	if len(waiting) != 1 || len(workers) != 1 || !q.Deleted() {
		t.Fatalf("Delete: %d waiting, %d workers, deleted %v", len(waiting), len(workers), q.Deleted())
	}
	if got := q.Enqueue(&req{name: "x"}); got != Gone {
		t.Fatalf("enqueue after delete: %v, want Gone", got)
	}
}

func TestConcurrentEnqueueAndPumpLoseNothing(t *testing.T) {
	q := New("a", Settings{Length: 1 << 20})
	w := &worker{credit: 1 << 20}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				q.Enqueue(&req{name: "r"})
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.AddWorker(w)
		for i := 0; i < 100; i++ {
			q.Pump()
		}
	}()
	wg.Wait()
	q.Pump()
	if n := w.Load() + q.Stats().Waiting; n != 4000 {
		t.Fatalf("dispatched + waiting = %d, want 4000", n)
	}
}
