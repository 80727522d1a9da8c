package attach

import (
	"errors"
	"io"
	"syscall"

	"httpsys/router/internal/splice"
	"httpsys/router/internal/wire"
)

const (
	// streamFrom: a RESPONSE or RES_BODY frame this large that one read did not bring
	// whole is handed on as it arrives (wire.Reader.StreamBodies) ...
	streamFrom = 128 << 10
	// ... when at least this much of it is still on the socket: less is read whole
	// (a splice pass costs two syscalls; a copy of this much costs about as much)
	spliceMin = 32 << 10
)

// Streamer is a Request that takes a large response body in pieces, on Linux straight
// from the worker's socket to its client's through a pipe (issue 25 "Bodies": no copy
// in user space). Every call is on the worker's read goroutine, no worker lock held.
type Streamer interface {
	// OnResponseStart: a RESPONSE whose body is longer than what was read: p is its
	// head and the body bytes read so far (checked), and rest more follow as pieces.
	// False: the request takes it whole (OnResponse), and has done nothing with it.
	OnResponseStart(w *Worker, p []byte, rest int) bool
	// OnResBodyStart is OnResponseStart for a RES_BODY.
	OnResBodyStart(w *Worker, flags byte, body []byte, rest int) bool
	// CanSplice: the next piece may go from a pipe to the client's socket now.
	CanSplice(w *Worker) bool
	// SpliceBody moves what p holds into the client's socket, as far as it takes it now
	// without waiting; what is left in p comes back as the next OnBodyPiece. last: p
	// holds the frame's end.
	SpliceBody(w *Worker, p *splice.Pipe, last bool)
	// OnBodyPiece: the next bytes of the frame's body, valid during the call only.
	OnBodyPiece(w *Worker, body []byte, last bool)
}

// streamed handles a frame the reader streamed: a Streamer takes its body in pieces,
// spliced while its client's socket takes them, read into memory from the first piece
// it does not; anything else gets the frame whole, as without streaming.
func (w *Worker) streamed(rd *wire.Reader, f wire.Frame) error {
	if err := wire.CheckFromWorker(f); err != nil {
		return w.fail(err)
	}
	r := w.lookup(f.ID)
	if r == nil {
		return nil // a late frame: Next skips its rest
	}
	s, ok := r.(Streamer)
	if ok && f.Rest >= spliceMin {
		switch f.Type {
		case wire.TypeResponse:
			ok = s.OnResponseStart(w, f.Payload, f.Rest)
		case wire.TypeResBody:
			ok = s.OnResBodyStart(w, f.Payload[0], f.Payload[1:], f.Rest)
		default:
			ok = false
		}
	} else {
		ok = false
	}
	if !ok {
		whole, err := rd.Complete(f)
		if err != nil {
			return err
		}
		return w.frame(whole)
	}
	// what the frames read so far appended (this response's head among them) goes out
	// before the body, and before this goroutine waits for the rest of it
	w.flushBatch()
	body := rd.Body()
	for body.N > 0 {
		if !w.canSplice() || !s.CanSplice(w) {
			b, err := rd.Rest()
			if err != nil {
				return err
			}
			s.OnBodyPiece(w, b, true)
			return nil
		}
		n, err := w.pipe.Fill(w.raw, int(body.N))
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		body.N -= int64(n)
		last := body.N == 0
		s.SpliceBody(w, w.pipe, last)
		if left := w.pipe.Buffered; left > 0 {
			b := rd.Scratch(left)
			if _, err := w.pipe.Read(b); err != nil {
				return err
			}
			s.OnBodyPiece(w, b, last)
		}
	}
	return nil
}

// canSplice opens the worker's pipe the first time; false where there is none.
func (w *Worker) canSplice() bool {
	if w.pipe != nil {
		return true
	}
	if w.noPipe || !splice.Supported {
		return false
	}
	sc, ok := w.nc.(syscall.Conn)
	if !ok {
		w.noPipe = true
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		w.noPipe = true
		return false
	}
	p, err := splice.New()
	if err != nil {
		// (out of file descriptors: bodies are copied, as before)
		w.log.Debug("no pipe for splicing response bodies", "err", err)
		w.noPipe = true
		return false
	}
	w.pipe, w.raw = p, raw
	return true
}

// closePipe: the read loop is over.
func (w *Worker) closePipe() {
	if w.pipe != nil {
		_ = w.pipe.Close()
		w.pipe = nil
	}
}
