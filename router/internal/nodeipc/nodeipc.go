// Package nodeipc is the child's end of node's IPC channel (child_process.spawn with
// an 'ipc' stdio entry: NODE_CHANNEL_FD names it, NODE_CHANNEL_SERIALIZATION_MODE is
// json): one JSON message a line, a handle (net.Server, net.Socket, a raw handle)
// travelling as a descriptor (SCM_RIGHTS) with the NODE_HANDLE message that names it,
// which the child acknowledges with NODE_HANDLE_ACK before node sends anything more.
// A standalone app hands the router the sockets its listen() bound this way (issue 25
// "Standalone", docs/architecture.md 11). Unix only: on Windows node passes handles by
// duplicating them into the child, which this package does not do (Open fails).
package nodeipc

import (
	"encoding/json"
	"os"
)

// Message is one message from the parent: Msg what its send() was given, File the
// descriptor that came with a NODE_HANDLE (nil for a message without one).
type Message struct {
	Msg  json.RawMessage
	File *os.File
}

// envelope is node's wrapping of a message that carries a handle.
type envelope struct {
	Cmd  string          `json:"cmd"`
	Type string          `json:"type"`
	Msg  json.RawMessage `json:"msg"`
}

// FromEnv is the channel node set up for this process, or nil when there is none.
func FromEnv() *os.File {
	s := os.Getenv("NODE_CHANNEL_FD")
	if s == "" || os.Getenv("NODE_CHANNEL_SERIALIZATION_MODE") == "advanced" {
		return nil
	}
	fd := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return nil
		}
		fd = fd*10 + int(c-'0')
	}
	return os.NewFile(uintptr(fd), "node-ipc")
}
