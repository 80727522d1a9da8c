package h2

// Writing: the frames for the client go to one buffer under the connection's lock,
// and one goroutine writes it (internal/conn's shape).

import (
	"golang.org/x/net/http2"
)

// ---- writing -------------------------------------------------------------------------

// kick wakes the writer when there is something to write.
func (c *Conn) kick() {
	if len(c.out.b) > 0 || c.ending {
		c.wcond.Signal()
	}
}

func (c *Conn) writeLoop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for len(c.out.b) == 0 && !c.dead && !c.ending {
			c.wcond.Wait()
		}
		if c.dead {
			return
		}
		if len(c.out.b) == 0 {
			// everything is out, the GOAWAY last: the end
			c.destroyLocked()
			return
		}
		buf, acks := c.out.b, c.acks
		c.out.b, c.acks = c.spare[:0], c.spareAcks[:0]
		c.writing = len(buf)
		c.ctlQueued = 0
		c.rcond.Broadcast()
		c.mu.Unlock()
		_, err := c.nc.Write(buf)
		c.mu.Lock()
		c.writing = 0
		if err != nil {
			c.destroyLocked()
			return
		}
		if cap(buf) <= keepBuffer {
			c.spare = buf[:0]
		} else {
			c.spare = nil
		}
		for _, a := range acks {
			a.s.sentOut(a.n)
		}
		clear(acks)
		c.spareAcks = acks[:0]
		c.pumpData()
	}
}

// goAway queues GOAWAY (the last stream the router took) once.
func (c *Conn) goAway(code http2.ErrCode) {
	if c.closing && code == http2.ErrCodeNo {
		return
	}
	c.closing = true
	_ = c.wf.WriteGoAway(c.maxSeen, code, nil)
	c.kick()
}

// end: close once what is queued is written.
func (c *Conn) end() {
	if c.dead || c.ending {
		return
	}
	c.ending = true
	c.deadline.Store(c.h.srv.Clock.After(lingerMs))
	c.wcond.Signal()
}

func (c *Conn) abortAll() {
	for _, s := range c.streams {
		s.localDone, s.remoteDone = true, true
		c.closeStream(s)
	}
}

// ---- frames to the client ----

// writeHeaders queues a HEADERS frame (and CONTINUATIONs past the client's frame size).
func (s *Stream) writeHeaders(fields []field, endStream bool) {
	c := s.c
	c.hbuf.Reset()
	for _, f := range fields {
		_ = c.henc.WriteField(hpackField(f))
	}
	blk := c.hbuf.Bytes()
	first := true
	for first || len(blk) > 0 {
		n := min(len(blk), c.peerMax)
		frag := blk[:n]
		blk = blk[n:]
		if first {
			_ = c.wf.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: frag, EndStream: endStream, EndHeaders: len(blk) == 0})
			first = false
		} else {
			_ = c.wf.WriteContinuation(s.id, len(blk) == 0, frag)
		}
	}
	if endStream {
		s.localDone = true
		c.maybeClosed(s)
	}
	c.kick()
}

// writeBody queues body bytes; ack of them used the worker's credit.
func (s *Stream) writeBody(body []byte, ack int) {
	s.resCredit -= ack
	s.pend = append(s.pend, clone(body))
	s.pendBytes += len(body)
	s.c.activate(s)
	s.c.pumpData()
	s.track(0)
}

// endData: END_STREAM after what is pending.
func (s *Stream) endData() {
	if s.localDone || s.closed {
		return
	}
	s.endAfter = true
	s.c.activate(s)
	s.c.pumpData()
}

func (s *Stream) wantsWrite() bool {
	return !s.closed && !s.localDone && (s.pendBytes > 0 || s.endAfter)
}

// writeSome frames one DATA frame within the windows; false when it could not.
func (s *Stream) writeSome() bool {
	c := s.c
	if !s.wantsWrite() {
		return false
	}
	if s.pendBytes == 0 {
		_ = c.wf.WriteData(s.id, true, nil)
		s.ended()
		return true
	}
	n := int(min(int64(len(s.pend[0])), s.sendWin, c.sendWin, int64(c.peerMax)))
	if n <= 0 {
		return false
	}
	chunk := s.pend[0]
	last := s.endAfter && n == s.pendBytes
	_ = c.wf.WriteData(s.id, last, chunk[:n])
	if n == len(chunk) {
		s.pend[0] = nil
		s.pend = s.pend[1:]
	} else {
		s.pend[0] = chunk[n:]
	}
	s.pendBytes -= n
	s.sendWin -= int64(n)
	c.sendWin -= int64(n)
	s.inOut += n
	c.acks = append(c.acks, ackEntry{s, n})
	if last {
		s.ended()
	}
	return true
}

// ended: END_STREAM is queued.
func (s *Stream) ended() {
	s.localDone = true
	s.endAfter = false
	if s.rstAfter && !s.remoteDone {
		s.c.resetStream(s, http2.ErrCodeNo)
		return
	}
	s.c.maybeClosed(s)
}
