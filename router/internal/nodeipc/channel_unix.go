//go:build unix

package nodeipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
)

// maxLine bounds one message: an https server's listen carries its key material and
// may carry node's default CAs (some 450 KB with the system's as NODE_EXTRA_CA_CERTS),
// so the control channel's bound (control.MaxLine).
const maxLine = 16 << 20

// Channel is the child's end of node's IPC channel.
type Channel struct {
	c  *net.UnixConn
	mu sync.Mutex // writes
}

// Open wraps f, the channel's descriptor.
func Open(f *os.File) (*Channel, error) {
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return nil, err
	}
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		_ = nc.Close()
		return nil, errors.New("the IPC descriptor is not a Unix socket")
	}
	return &Channel{c: uc}, nil
}

// Serve reads messages until the channel ends (the parent gone) and calls fn with
// each, in order. A handle's NODE_HANDLE_ACK is written before fn runs: node holds
// every later message until it comes.
func (ch *Channel) Serve(fn func(Message)) error {
	buf := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(4*16))
	var line []byte
	var files []*os.File // descriptors received, for the NODE_HANDLE messages to come
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	for {
		n, oobn, _, _, err := ch.c.ReadMsgUnix(buf, oob)
		if oobn > 0 {
			files = append(files, rights(oob[:oobn])...)
		}
		if err != nil && n <= 0 {
			return err
		}
		if n < 0 {
			n = 0
		}
		line = append(line, buf[:n]...)
		for {
			i := bytes.IndexByte(line, '\n')
			if i < 0 {
				break
			}
			one := line[:i]
			var env envelope
			if json.Unmarshal(one, &env) == nil && env.Cmd == "NODE_HANDLE" {
				var f *os.File
				if len(files) > 0 {
					f, files = files[0], files[1:]
				}
				ch.Send(map[string]string{"cmd": "NODE_HANDLE_ACK"})
				fn(Message{Msg: append(json.RawMessage(nil), env.Msg...), File: f})
			} else if len(one) > 0 {
				fn(Message{Msg: append(json.RawMessage(nil), one...)})
			}
			line = line[i+1:]
		}
		if len(line) > maxLine {
			return errors.New("a message on the IPC channel is too long")
		}
		line = append([]byte(nil), line...)
	}
}

// Send writes one message; the parent's child.on('message') hears it.
func (ch *Channel) Send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	b = append(b, '\n')
	ch.mu.Lock()
	defer ch.mu.Unlock()
	_, _ = ch.c.Write(b)
}

// Close ends the channel.
func (ch *Channel) Close() error { return ch.c.Close() }

func rights(oob []byte) []*os.File {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []*os.File
	for i := range msgs {
		fds, err := syscall.ParseUnixRights(&msgs[i])
		if err != nil {
			continue
		}
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			out = append(out, os.NewFile(uintptr(fd), "node-handle"))
		}
	}
	return out
}
