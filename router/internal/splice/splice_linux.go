//go:build linux

package splice

import (
	"errors"
	"io"
	"syscall"
)

// Size is what a pipe is asked to hold (F_SETPIPE_SZ): 1 MiB, the default
// /proc/sys/fs/pipe-max-size, a 1 MB response in one pass. A smaller pipe (the
// system's limit) only means more passes.
const Size = 1 << 20

// Supported: this system splices.
const Supported = true

const fSetPipeSz = 1031 // F_SETPIPE_SZ (linux/fcntl.h)

// Pipe is a pipe whose two ends the router holds. Buffered is what it holds now.
type Pipe struct {
	r, w     int
	cap      int
	Buffered int
}

// New opens a pipe, both ends non-blocking.
func New() (*Pipe, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, err
	}
	p := &Pipe{r: fds[0], w: fds[1], cap: 64 << 10}
	if n, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(p.w), fSetPipeSz, Size); e == 0 {
		p.cap = int(n)
	}
	return p, nil
}

// Cap is how many bytes one Fill may move.
func (p *Pipe) Cap() int { return p.cap }

// Fill moves up to n bytes (at most Cap less Buffered) from src into the pipe, waiting
// until src has some. It returns how many moved; io.EOF when src ended first.
func (p *Pipe) Fill(src syscall.RawConn, n int) (int, error) {
	n = min(n, p.cap-p.Buffered)
	if n <= 0 {
		return 0, nil
	}
	var moved int
	var serr error
	err := src.Read(func(fd uintptr) bool {
		for {
			m, err := syscall.Splice(int(fd), nil, p.w, nil, n, spliceFlags)
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.EAGAIN {
				return false // wait for the source (the runtime's poller)
			}
			moved, serr = int(m), err
			return true
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return 0, err
	}
	if moved == 0 {
		return 0, io.EOF
	}
	p.Buffered += moved
	return moved, nil
}

// Drain moves what the pipe holds, up to n bytes, into dst as far as dst takes it now,
// without waiting. It returns how many moved; the rest stays Buffered.
func (p *Pipe) Drain(dst syscall.RawConn, n int) (int, error) {
	n = min(n, p.Buffered)
	var moved int
	var serr error
	err := dst.Write(func(fd uintptr) bool {
		for moved < n {
			m, err := syscall.Splice(p.r, nil, int(fd), nil, n-moved, spliceFlags)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				if err != syscall.EAGAIN {
					serr = err
				}
				break
			}
			if m == 0 {
				break
			}
			moved += int(m)
		}
		return true // never wait for the destination
	})
	p.Buffered -= moved
	if err == nil {
		err = serr
	}
	return moved, err
}

// Read copies what the pipe holds into b (the bytes a destination did not take).
func (p *Pipe) Read(b []byte) (int, error) {
	b = b[:min(len(b), p.Buffered)]
	got := 0
	for got < len(b) {
		m, err := syscall.Read(p.r, b[got:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			p.Buffered -= got
			return got, err
		}
		if m == 0 {
			p.Buffered -= got
			return got, io.ErrUnexpectedEOF
		}
		got += m
	}
	p.Buffered -= got
	return got, nil
}

// Close closes both ends.
func (p *Pipe) Close() error {
	return errors.Join(syscall.Close(p.r), syscall.Close(p.w))
}

// SPLICE_F_MOVE | SPLICE_F_NONBLOCK: pages are moved where the kernel can, and the pipe
// never blocks (the sockets are non-blocking already: Go's)
const spliceFlags = 1 | 2
