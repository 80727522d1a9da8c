// Package upload is a request body on its way to its worker, HTTP/1.1's (internal/conn)
// and h2's (internal/h2) alike: sent within the worker's READ credit, the rest held in
// order until credit comes, and what the worker may not have seen (it has not
// acknowledged the request yet) kept, so that a requeue after the worker died replays
// the whole body to the next one (docs/wire-protocol.md "Flow control", "Requeue").
// What a protocol does around it (pausing the socket,
// returning a stream's receive window) stays with the protocol.
package upload

import "httpsys/router/internal/wire"

// Body is one request's body on its way. Its fields are its connection's lock's.
type Body struct {
	Credit    int64    // what the worker may still take (its READ frames)
	Held      [][]byte // chunks waiting for credit, in order; nil when none
	HeldBytes int
	EndSent   bool // BODY_END went to the worker
	replay    [][]byte
}

// New is a body as a REQUEST starts it: the worker's initial credit.
func New() Body { return Body{Credit: wire.InitialBodyWindow} }

// Take: a chunk of n bytes that arrived may go to the worker at once (nothing held
// before it, and the credit covers it); the credit is taken.
func (b *Body) Take(n int) bool {
	if b.Held != nil || b.Credit < int64(n) {
		return false
	}
	b.Credit -= int64(n)
	return true
}

// Hold keeps chunk (the body's own memory) until credit comes.
func (b *Body) Hold(chunk []byte) {
	b.Held = append(b.Held, chunk)
	b.HeldBytes += len(chunk)
}

// Next takes the next held bytes the credit allows; false when none may go.
func (b *Body) Next() ([]byte, bool) {
	if b.Credit <= 0 || len(b.Held) == 0 {
		if b.Held != nil && len(b.Held) == 0 {
			b.Held = nil
		}
		return nil, false
	}
	chunk := b.Held[0]
	if int64(len(chunk)) > b.Credit {
		b.Held[0] = chunk[b.Credit:]
		chunk = chunk[:b.Credit]
	} else {
		b.Held[0] = nil
		b.Held = b.Held[1:]
		if len(b.Held) == 0 {
			b.Held = nil
		}
	}
	b.Credit -= int64(len(chunk))
	b.HeldBytes -= len(chunk)
	return chunk, true
}

// Sending: chunk (the body's own memory when unseen) goes to the worker now. unseen:
// the worker has not acknowledged the request, so it is kept for a replay; once it has,
// what was kept is let go.
func (b *Body) Sending(chunk []byte, unseen bool) {
	if unseen {
		b.replay = append(b.replay, chunk)
	} else if b.replay != nil {
		b.replay = nil
	}
}

// Drop lets the held bytes go (nobody will read them); it returns how many they were.
func (b *Body) Drop() int {
	n := b.HeldBytes
	b.Held = nil
	b.HeldBytes = 0
	return n
}

// Requeue: the worker died before it acknowledged the request; for the next worker
// the body starts again, with what was sent to the dead one held first.
func (b *Body) Requeue() {
	b.EndSent = false
	b.Credit = wire.InitialBodyWindow
	if b.replay == nil {
		return
	}
	sent := append(b.replay, b.Held...)
	b.replay = nil
	n := 0
	for _, c := range sent {
		n += len(c)
	}
	b.Held = sent
	b.HeldBytes = n
	if len(sent) == 0 {
		b.Held = nil
	}
}
