//go:build !unix

package nodeipc

import (
	"errors"
	"os"
)

// Channel is not available here: node hands a Windows child its handles by
// duplicating them into it, which this package does not do.
type Channel struct{}

// Open fails: see Channel.
func Open(f *os.File) (*Channel, error) {
	_ = f.Close()
	return nil, errors.New("node's IPC channel is not read on this platform")
}

// Serve is never reached (Open fails).
func (ch *Channel) Serve(fn func(Message)) error { return errors.New("not available") }

// Send is never reached (Open fails).
func (ch *Channel) Send(v any) {}

// Close is never reached (Open fails).
func (ch *Channel) Close() error { return nil }
