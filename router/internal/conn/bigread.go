package conn

// bigRead: a connection whose read fills its readSize buffer (a request body streaming
// in, a burst of pipelined requests) reads into a buffer of this size, from a second pool,
// until a read comes back shorter than readSize. A 1 MB upload is then 8 reads of the
// client's socket instead of 32 (syscalls were two thirds of the router's upload profile,
// bench/results/router-profile.md), while a connection that sends little, idle
// keep-alive ones above all, keeps only its readSize buffer.
const bigRead = 128 << 10

func (s *Server) bigBuffer() *[]byte {
	if bp, ok := s.bigBuffers.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, bigRead)
	return &b
}

// nextBuffer is the buffer for a connection's next read, after one of n bytes into cur;
// small is its own readSize buffer. Nothing holds a read's bytes once onData returned.
func (s *Server) nextBuffer(small, cur *[]byte, n int) *[]byte {
	switch {
	case cur == small && n == len(*small):
		return s.bigBuffer()
	case cur != small && n < len(*small):
		s.bigBuffers.Put(cur)
		return small
	}
	return cur
}
