package queue

import (
	"slices"
	"sync"
	"testing"
)

// The cases of the JS router's request-queue tests (removed with it, issue 25) that
// the tests beside this one did not hold.

// loaded is a worker whose load the test sets: what it holds in flight, and its credit
// (its receive window).
type loaded struct {
	mu       sync.Mutex
	credit   int
	inFlight int
	got      []string
}

func (w *loaded) CanTake() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.credit > 0 }
func (w *loaded) Load() int     { w.mu.Lock(); defer w.mu.Unlock(); return w.inFlight }
func (w *loaded) TryDispatch(r Request) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.credit == 0 {
		return false
	}
	w.credit--
	w.inFlight++
	w.got = append(w.got, r.(*req).name)
	return true
}

// the clock's tick (internal/clock: once a second)
const tick = 1000

func TestExpireNeverEarlySkippingDepartedOnes(t *testing.T) {
	q := New("q", Settings{Length: 10, TimeoutMs: 5000})
	reqs := []*req{{name: "1"}, {name: "2"}, {name: "3"}, {name: "4"}}
	for i, at := range []int64{0, 1000, 2000, 9000} {
		reqs[i].e.Arrive(at)
		q.Enqueue(reqs[i])
	}
	q.Forget(reqs[1]) // its client went away
	// the clock may be a tick behind the real time: nothing expires before timeout + tick
	if got := q.Expire(5000+tick-1, tick); len(got) != 0 {
		t.Fatalf("expired early: %v", names(got))
	}
	if got := names(q.Expire(7000+tick, tick)); !slices.Equal(got, []string{"1", "3"}) {
		t.Fatalf("expired %v, want [1 3]", got)
	}
	if s := q.Stats(); s.Waiting != 1 {
		t.Fatalf("waiting %d, want 1", s.Waiting)
	}
	if reqs[0].e.waiting {
		t.Fatal("an expired request still says it waits")
	}
	w := &loaded{credit: 10}
	q.AddWorker(w)
	q.Pump()
	if !slices.Equal(w.got, []string{"4"}) {
		t.Fatalf("worker got %v, want [4]", w.got)
	}
}

func TestAQueueWithoutATimeoutNeverExpiresAnything(t *testing.T) {
	q := New("q", Settings{Length: 10})
	r := &req{name: "1"}
	r.e.Arrive(0)
	q.Enqueue(r)
	if got := q.Expire(1e12, tick); len(got) != 0 {
		t.Fatalf("expired %v", names(got))
	}
	if s := q.Stats(); s.Waiting != 1 {
		t.Fatalf("waiting %d, want 1", s.Waiting)
	}
}

func TestWithoutAWorkerRequestsWaitInOrderUpToTheLength(t *testing.T) {
	q := New("q", Settings{Length: 3})
	var results []Result
	for _, n := range []string{"1", "2", "3", "4"} {
		results = append(results, q.Enqueue(&req{name: n}))
	}
	if !slices.Equal(results, []Result{Waiting, Waiting, Waiting, Full}) {
		t.Fatalf("enqueue results %v", results)
	}
	w := &loaded{credit: 10}
	q.AddWorker(w)
	q.Pump()
	if !slices.Equal(w.got, []string{"1", "2", "3"}) || q.Stats().Waiting != 0 {
		t.Fatalf("worker got %v, %d still waiting", w.got, q.Stats().Waiting)
	}
}

func TestTheLeastLoadedWorkerGetsTheNextOneTiesRoundRobin(t *testing.T) {
	q := New("q", Settings{Length: 100})
	a, b, c := &loaded{credit: 100}, &loaded{credit: 100}, &loaded{credit: 100}
	q.AddWorker(a)
	q.AddWorker(b)
	q.AddWorker(c)
	for _, n := range []string{"1", "2", "3", "4", "5", "6"} {
		q.Enqueue(&req{name: n})
	}
	if !slices.Equal(a.got, []string{"1", "4"}) || !slices.Equal(b.got, []string{"2", "5"}) || !slices.Equal(c.got, []string{"3", "6"}) {
		t.Fatalf("a %v b %v c %v, want [1 4] [2 5] [3 6]", a.got, b.got, c.got)
	}
	// b finishes its two: it is the least loaded now and gets the next two
	b.mu.Lock()
	b.inFlight = 0
	b.mu.Unlock()
	q.Enqueue(&req{name: "7"})
	q.Enqueue(&req{name: "8"})
	if !slices.Equal(b.got, []string{"2", "5", "7", "8"}) {
		t.Fatalf("b got %v, want [2 5 7 8]", b.got)
	}
}

func TestAWorkerWithoutCreditIsSkippedAndRequestsWaitWhenNobodyHasAny(t *testing.T) {
	q := New("q", Settings{Length: 100})
	a, b := &loaded{credit: 1}, &loaded{credit: 0}
	q.AddWorker(a)
	q.AddWorker(b)
	q.Enqueue(&req{name: "1"})
	q.Enqueue(&req{name: "2"})
	if !slices.Equal(a.got, []string{"1"}) || len(b.got) != 0 || q.Stats().Waiting != 1 {
		t.Fatalf("a %v b %v waiting %d, want [1] [] 1", a.got, b.got, q.Stats().Waiting)
	}
	b.mu.Lock()
	b.credit = 5
	b.mu.Unlock()
	q.Pump()
	if !slices.Equal(b.got, []string{"2"}) {
		t.Fatalf("b got %v, want [2]", b.got)
	}
}

func TestRequestsThatLeftWhileWaitingAreSkippedRequeuedOnesGoFirst(t *testing.T) {
	q := New("q", Settings{Length: 100})
	r1, r2, r3 := &req{name: "1"}, &req{name: "2"}, &req{name: "3"}
	q.Enqueue(r1)
	q.Enqueue(r2)
	q.Enqueue(r3)
	q.Forget(r2)
	if s := q.Stats(); s.Waiting != 2 {
		t.Fatalf("waiting %d, want 2", s.Waiting)
	}
	q.RequeueFront(&req{name: "0"})
	w := &loaded{credit: 10}
	q.AddWorker(w)
	q.Pump()
	if !slices.Equal(w.got, []string{"0", "1", "3"}) {
		t.Fatalf("worker got %v, want [0 1 3]", w.got)
	}
}

func TestRemovingAWorkerKeepsBalancingAmongTheRest(t *testing.T) {
	q := New("q", Settings{Length: 100})
	a, b := &loaded{credit: 100}, &loaded{credit: 100}
	q.AddWorker(a)
	q.AddWorker(b)
	q.Enqueue(&req{name: "1"})
	q.RemoveWorker(a)
	q.Enqueue(&req{name: "2"})
	q.Enqueue(&req{name: "3"})
	if len(a.got)+len(b.got) != 3 || len(a.got) > 1 {
		t.Fatalf("a %v b %v: the removed worker got more than its one", a.got, b.got)
	}
}

func TestTakeWaitingEmptiesTheQueueOfLiveRequestsOnly(t *testing.T) {
	q := New("q", Settings{Length: 100})
	rs := []*req{{name: "1"}, {name: "2"}, {name: "3"}}
	for _, r := range rs {
		q.Enqueue(r)
	}
	q.Forget(rs[1])
	if got := names(q.TakeWaiting()); !slices.Equal(got, []string{"1", "3"}) {
		t.Fatalf("took %v, want [1 3]", got)
	}
	if s := q.Stats(); s.Waiting != 0 {
		t.Fatalf("waiting %d, want 0", s.Waiting)
	}
}

func TestTheDequeKeepsFIFOOrderAcrossShiftsUnshiftsAndCompactions(t *testing.T) {
	var d deque[int]
	var model []int
	for i := 0; i < 5000; i++ {
		switch {
		case i%3 == 2:
			got, ok := d.shift()
			if len(model) == 0 {
				if ok {
					t.Fatalf("step %d: shift of an empty deque gave %d", i, got)
				}
				break
			}
			if !ok || got != model[0] {
				t.Fatalf("step %d: shift gave %d, want %d", i, got, model[0])
			}
			model = model[1:]
		case i%7 == 0:
			d.unshift(-i)
			model = append([]int{-i}, model...)
		default:
			d.push(i)
			model = append(model, i)
		}
		if d.size() != len(model) {
			t.Fatalf("step %d: size %d, want %d", i, d.size(), len(model))
		}
	}
	for _, want := range model {
		if got, ok := d.shift(); !ok || got != want {
			t.Fatalf("drain gave %d, want %d", got, want)
		}
	}
	if d.size() != 0 {
		t.Fatalf("size %d after the drain", d.size())
	}
}
