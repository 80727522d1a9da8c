package wire

import (
	"encoding/binary"
	"errors"
	"io"
)

// Reader splits a byte stream into frames. A frame that arrived whole is handed out
// as a view of the read buffer: no copy, no allocation. A frame cut by the end of a
// read is moved to the front of the buffer once and completed there; one larger than
// the buffer is read into a buffer of its own size (docs/wire-protocol.md "Frames":
// "copied once into a buffer of its size").
//
// A body frame (BODY, RES_BODY) can instead be streamed: see StreamBodies. That is the
// large-body path of src/wire/protocol.js's onPieces, where a body goes from the
// worker's socket to the client's without a copy in between.
type Reader struct {
	src  io.Reader
	buf  []byte
	r, w int   // unread bytes are buf[r:w]
	err  error // from src, returned once the buffered frames are out
	bad  error // a protocol error: the stream is dead

	streamFrom int
	body       io.LimitedReader // the streamed frame's payload still on src

	large []byte // readLarge's buffer, kept for the next large frame (keepLarge)
}

// NewReader reads frames from src through a buffer of size bytes. Frames up to size
// bytes are read in place; 64 KiB holds a read's worth of ordinary frames.
func NewReader(src io.Reader, size int) *Reader {
	if size < HeaderSize+1 {
		size = HeaderSize + 1
	}
	return &Reader{src: src, buf: make([]byte, size)}
}

// StreamBodies makes Next stream body frames (BODY, RES_BODY) of at least n bytes,
// header included, that are not whole in the buffer: Next returns them with the
// payload bytes already read (RES_BODY's flags byte always among them) and Frame.Rest
// set, and the rest is read from Body. n <= 0 turns streaming off.
func (r *Reader) StreamBodies(n int) { r.streamFrom = n }

// Body is the streamed frame's payload still on the stream. It is an
// *io.LimitedReader over the source, so a *net.TCPConn's ReadFrom can splice it
// (Linux) straight from a *net.UnixConn. Next skips what the caller did not read.
func (r *Reader) Body() *io.LimitedReader { return &r.body }

// Buffered is how many bytes were read but not handed out yet.
func (r *Reader) Buffered() int { return r.w - r.r }

// Next returns the next frame, reading as needed. Its payload is valid until the next
// call of Next (NextBuffered moves nothing). At the end of
// the stream it returns io.EOF between frames and io.ErrUnexpectedEOF inside one; a
// malformed length is a *ProtocolError, and every later call returns it again.
func (r *Reader) Next() (Frame, error) {
	if r.bad != nil {
		return Frame{}, r.bad
	}
	if r.body.N > 0 {
		if err := r.skipBody(); err != nil {
			return Frame{}, err
		}
	}
	for {
		avail := r.w - r.r
		if avail == 0 {
			r.r, r.w = 0, 0
		}
		if avail >= 4 {
			// the length is judged as soon as it is there, as src/wire/protocol.js does
			if l := binary.LittleEndian.Uint32(r.buf[r.r:]); l < 5 || l > MaxFrame {
				r.bad = badLength(l)
				return Frame{}, r.bad
			}
		}
		if avail >= HeaderSize {
			b := r.buf[r.r:r.w]
			total := 4 + int(binary.LittleEndian.Uint32(b))
			if avail >= total {
				f := Frame{Type: Type(b[4]), ID: binary.LittleEndian.Uint32(b[5:]), Payload: b[HeaderSize:total:total]}
				r.r += total
				if r.r == r.w {
					r.r, r.w = 0, 0
				}
				return f, nil
			}
			st := streamNo
			if r.err == nil {
				st = r.streams(b, total)
			}
			if st == streamNow {
				f := Frame{Type: Type(b[4]), ID: binary.LittleEndian.Uint32(b[5:]), Payload: b[HeaderSize:avail:avail], Rest: total - avail}
				r.body = io.LimitedReader{R: r.src, N: int64(f.Rest)}
				r.r, r.w = 0, 0
				return f, nil
			}
			if total > len(r.buf) && st == streamNo {
				return r.readLarge(total)
			}
			if r.r+min(total, len(r.buf)) > len(r.buf) {
				r.compact()
			}
		} else if r.r+HeaderSize > len(r.buf) {
			r.compact()
		}
		if err := r.fill(); err != nil {
			return Frame{}, err
		}
	}
}

// NextBuffered returns the next frame only if it is whole in the buffer: no read, no
// bytes moved. The frames of one batch of NextBuffered calls (after a Next) all stay
// valid until the next Next, so a caller can handle everything one read brought,
// queue bodies by reference, and write once before it reads again (docs/wire-protocol.md
// "Frames": one write per batch).
func (r *Reader) NextBuffered() (Frame, bool, error) {
	if r.bad != nil {
		return Frame{}, false, r.bad
	}
	avail := r.w - r.r
	if r.body.N > 0 || avail < 4 {
		return Frame{}, false, nil
	}
	b := r.buf[r.r:r.w]
	l := binary.LittleEndian.Uint32(b)
	if l < 5 || l > MaxFrame {
		r.bad = badLength(l)
		return Frame{}, false, r.bad
	}
	total := 4 + int(l)
	if avail < total {
		return Frame{}, false, nil
	}
	r.r += total
	return Frame{Type: Type(b[4]), ID: binary.LittleEndian.Uint32(b[5:]), Payload: b[HeaderSize:total:total]}, true, nil
}

// What streams says of a frame not whole in the buffer.
const (
	streamNo   = iota // read it whole
	streamNow         // hand it out streamed
	streamWait        // a RESPONSE whose head is not all in yet: read on, then stream it
)

// streams: a body frame streams once its fixed part is in (RES_BODY's flags byte); a
// RESPONSE, whose body follows its head (a 1 MB res.end() is one RESPONSE), once its
// whole head is, so that the head is checked and handed out as a whole one would be.
func (r *Reader) streams(b []byte, total int) int {
	if r.streamFrom <= 0 || total < r.streamFrom {
		return streamNo
	}
	switch Type(b[4]) {
	case TypeBody:
		return streamNow
	case TypeResBody:
		if len(b) > HeaderSize {
			return streamNow
		}
		return streamWait
	case TypeResponse:
		p := b[HeaderSize:]
		if len(p) < 10 {
			return streamWait
		}
		rl := int(binary.LittleEndian.Uint16(p[8:]))
		if len(p) < 14+rl {
			if HeaderSize+14+rl > len(r.buf) {
				return streamNo
			}
			return streamWait
		}
		head := HeaderSize + 14 + rl + int(binary.LittleEndian.Uint32(p[10+rl:]))
		switch {
		case head > total || head > len(r.buf):
			return streamNo // a head past its frame is CheckResponse's to refuse; a huge one is read whole
		case head > len(b):
			return streamWait
		}
		return streamNow
	}
	return streamNo
}

// Complete reads the rest of a streamed frame f, which nothing has read from Body yet,
// and returns the frame whole, as Next returns one it did not stream.
func (r *Reader) Complete(f Frame) (Frame, error) {
	if f.Rest == 0 {
		return f, nil
	}
	have := len(f.Payload)
	b := r.largeBuffer(have + int(r.body.N))
	copy(b, f.Payload)
	if _, err := r.readBody(b[have:]); err != nil {
		return Frame{}, err
	}
	f.Payload, f.Rest = b, 0
	return f, nil
}

// Rest reads what is left of the streamed frame's payload and returns it: valid until
// the next call of Next, Complete, Rest or Scratch.
func (r *Reader) Rest() ([]byte, error) {
	return r.readBody(r.largeBuffer(int(r.body.N)))
}

// Scratch is n bytes of the reader's kept buffer for large frames, for the caller to
// fill: valid until the next call of Next, Complete, Rest or Scratch.
func (r *Reader) Scratch(n int) []byte { return r.largeBuffer(n) }

func (r *Reader) readBody(b []byte) ([]byte, error) {
	if _, err := io.ReadFull(&r.body, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		r.err = err
		return nil, err
	}
	return b, nil
}

func (r *Reader) compact() {
	n := copy(r.buf, r.buf[r.r:r.w])
	r.r, r.w = 0, n
}

// fill reads once into the free end of the buffer.
func (r *Reader) fill() error {
	if r.err != nil {
		return r.endError()
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.err = err
			if n == 0 {
				return r.endError()
			}
		}
		if n > 0 {
			return nil
		}
	}
	r.err = io.ErrNoProgress
	return r.err
}

func (r *Reader) endError() error {
	if errors.Is(r.err, io.EOF) && r.w > r.r {
		return io.ErrUnexpectedEOF
	}
	return r.err
}

// readLarge reads a frame larger than the buffer into a slice of its own; the
// buffered bytes are its beginning.
func (r *Reader) readLarge(total int) (Frame, error) {
	if r.err != nil {
		return Frame{}, r.endError()
	}
	b := r.largeBuffer(total)
	have := copy(b, r.buf[r.r:r.w])
	r.r, r.w = 0, 0
	if _, err := io.ReadFull(r.src, b[have:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		r.err = err
		return Frame{}, err
	}
	return Frame{Type: Type(b[4]), ID: binary.LittleEndian.Uint32(b[5:]), Payload: b[HeaderSize:]}, nil
}

func (r *Reader) skipBody() error {
	if _, err := io.Copy(io.Discard, &r.body); err != nil {
		r.err = err
		return err
	}
	if r.body.N > 0 {
		r.err = io.ErrUnexpectedEOF
		return r.err
	}
	return nil
}
