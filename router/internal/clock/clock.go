// Package clock is the router's coarse clock: one tick a second
// refreshes "now" and the HTTP Date text and runs the sweeps (connection deadlines,
// queue timeouts). Deadlines are plain numbers compared on the tick, so the hot path
// arms no timer per request or connection; timeouts are accurate to a second, which is
// what HTTP.SYS's timers (HTTP_TIMEOUT_LIMIT_INFO) need.
package clock

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Tick is how often the clock refreshes; Now may be this much behind.
const Tick = time.Second

// Clock is one router's clock. Its zero value is not usable: use New.
type Clock struct {
	now  atomic.Int64 // ms since the epoch
	date atomic.Pointer[[]byte]

	mu     sync.Mutex
	sweeps []func(now int64)
}

// New returns a clock set to the present; Run makes it tick.
func New() *Clock {
	c := &Clock{}
	c.set(time.Now())
	return c
}

func (c *Clock) set(t time.Time) {
	c.now.Store(t.UnixMilli())
	d := []byte(t.UTC().Format(http.TimeFormat))
	c.date.Store(&d)
}

// Now is the time of the last tick, in ms.
func (c *Clock) Now() int64 { return c.now.Load() }

// Date is the IMF-fixdate of the last tick (the Date header); do not modify it.
func (c *Clock) Date() []byte { return *c.date.Load() }

// After is a deadline ms from now for a sweep to compare with its now: never early
// (Now may be a tick old), at most two ticks late. 0 (no deadline) when ms is 0.
func (c *Clock) After(ms int64) int64 {
	if ms <= 0 {
		return 0
	}
	return c.Now() + ms + Tick.Milliseconds()
}

// Every runs fn(now) on each tick, on the clock's goroutine, until Run returns.
func (c *Clock) Every(fn func(now int64)) {
	c.mu.Lock()
	c.sweeps = append(c.sweeps, fn)
	c.mu.Unlock()
}

// Run ticks until ctx is done.
func (c *Clock) Run(ctx context.Context) {
	t := time.NewTicker(Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.set(now)
			c.mu.Lock()
			sweeps := c.sweeps
			c.mu.Unlock()
			ms := now.UnixMilli()
			for _, fn := range sweeps {
				fn(ms)
			}
		}
	}
}
