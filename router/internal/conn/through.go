package conn

// throughMin: a response body piece this large is written to the socket from the
// worker's frame itself when nothing is waiting to be written or being written: no copy
// into the connection's buffer first. That copy was a fifth of the router's CPU on 1 MB
// responses (bench/results/router-profile.md); for small pieces the copy is cheaper than
// the extra write it would take to avoid it.
const throughMin = 64 << 10

// appendBody appends body to what r sends (at dst(r)), and accounts it with wrote. When
// r is first in line, the socket is idle and body is large, what is queued (the head)
// and body go in one write now, as far as the socket takes them without waiting, and
// only the rest is copied. Under the lock.
func (c *Conn) appendBody(r *Request, body []byte, n, ack int) {
	if len(body) >= throughMin && r == c.first && c.writing == 0 && !c.dead {
		head := len(c.out)
		m, err := tryWrite2(c.nc, c.out, body)
		if err != nil {
			c.destroyLocked()
			return
		}
		if m > 0 {
			if m < head {
				c.out = c.out[:copy(c.out, c.out[m:])]
			} else {
				c.out = c.out[:0]
				body = body[m-head:]
			}
			if len(c.out) == 0 && len(body) == 0 {
				// taken whole: the acks of what was queued before, then this piece's
				c.sent()
				if w := r.link.Worker(); w != nil && ack > 0 {
					w.SendWindow(r, ack)
				}
				c.wrote(r, n, 0)
				return
			}
		}
	}
	dst := c.dst(r)
	*dst = append(*dst, body...)
	c.wrote(r, n, ack)
}
