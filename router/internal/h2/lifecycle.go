package h2

// A connection's end: its deadline, GOAWAY, and the Server's registry calls.

import (
	"crypto/tls"

	"golang.org/x/net/http2"

	"httpsys/router/internal/attach"
)

// ---- the registry's calls (conn.Peer) ------------------------------------------------

// Port is the local port it came to.
func (c *Conn) Port() int { return c.port }

// Deadline is when Timeout is due.
func (c *Conn) Deadline() int64 { return c.deadline.Load() }

// Timeout: idle too long, or a closing connection
// waited enough: closed. With streams in flight, every body_timeout: a stream whose
// request body had no DATA for that long while the router was not holding it back is
// reset (as HTTP/1.1's body_timeout ends its connection), and the client must have
// answered the PING sent at the last look.
func (c *Conn) Timeout() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	srv := c.h.srv
	if len(c.streams) > 0 && !c.closing && !c.ending {
		if c.pingOut {
			c.destroyLocked()
			return
		}
		if bt := srv.Limits.BodyTimeout; bt > 0 {
			stale := srv.Clock.Now() - bt
			for _, s := range c.streams {
				if !s.remoteDone && s.body.Held == nil && s.lastData <= stale {
					c.resetStream(s, http2.ErrCodeCancel)
				}
			}
		}
		c.pingOut = true
		_ = c.wf.WritePing(false, [8]byte{'h', 't', 't', 'p', 's', 'y', 's'})
		c.kick()
		c.deadline.Store(srv.Clock.After(c.period()))
		return
	}
	c.destroyLocked()
}

// period is how often Timeout looks at the streams in flight.
func (c *Conn) period() int64 {
	if bt := c.h.srv.Limits.BodyTimeout; bt > 0 {
		return bt
	}
	return livenessMs
}

// CloseWhenIdle: GOAWAY; the streams in flight finish, then it closes.
func (c *Conn) CloseWhenIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeWhenIdleLocked()
}

func (c *Conn) closeWhenIdleLocked() {
	if c.dead || c.closing {
		return
	}
	c.goAway(http2.ErrCodeNo)
	if len(c.streams) == 0 {
		c.end()
	}
}

// Shutdown: the router closes: GOAWAY; the streams in flight have lingerMs.
func (c *Conn) Shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.goAway(http2.ErrCodeNo)
	c.deadline.Store(c.h.srv.Clock.After(lingerMs))
	if len(c.streams) == 0 {
		c.end()
	}
}

// Destroy closes the socket at once.
func (c *Conn) Destroy() { c.destroy() }

// EndBy is a worker's CONN_END: only a worker that had streams of it may.
func (c *Conn) EndBy(w *attach.Worker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.seen {
		if x == w {
			c.closeWhenIdleLocked()
			return
		}
	}
}

func (c *Conn) destroy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.destroyLocked()
}

// destroyLocked closes the socket at once: unanswered streams are aborted at their
// workers, and the workers that had streams of it hear it closed.
func (c *Conn) destroyLocked() {
	if c.dead {
		return
	}
	c.dead = true
	// the socket itself: tls.Conn's Close would first write close_notify, under this
	// lock, to a client that may not read (node's destroy() sends none either)
	if tc, ok := c.nc.(*tls.Conn); ok {
		_ = tc.NetConn().Close()
	} else {
		_ = c.nc.Close()
	}
	c.deadline.Store(0)
	for _, s := range c.streams {
		s.closed = true
		if !s.resDone {
			s.abort()
		}
	}
	c.streams = map[uint32]*Stream{}
	c.active = nil
	c.out.b = nil
	c.acks = nil
	c.wcond.Broadcast()
	c.rcond.Broadcast()
	for _, w := range c.seen {
		w.SendConnClosed(c.id)
	}
	c.seen = nil
	c.h.srv.RemovePeer(c.id)
	c.release()
}
