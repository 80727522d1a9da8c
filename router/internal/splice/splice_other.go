//go:build !linux

package splice

import (
	"errors"
	"syscall"
)

// Supported: this system splices.
const Supported = false

// errUnsupported: only Linux has splice(2); elsewhere bodies are copied as before.
var errUnsupported = errors.New("splice: not supported on this system")

// Pipe is a placeholder: New always fails here.
type Pipe struct{ Buffered int }

// New fails: no splice here.
func New() (*Pipe, error) { return nil, errUnsupported }

// Cap is 0.
func (p *Pipe) Cap() int { return 0 }

// Fill fails.
func (p *Pipe) Fill(syscall.RawConn, int) (int, error) { return 0, errUnsupported }

// Drain fails.
func (p *Pipe) Drain(syscall.RawConn, int) (int, error) { return 0, errUnsupported }

// Read fails.
func (p *Pipe) Read([]byte) (int, error) { return 0, errUnsupported }

// Close does nothing.
func (p *Pipe) Close() error { return nil }
