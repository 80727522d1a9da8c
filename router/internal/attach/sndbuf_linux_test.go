package attach

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A worker's socket gets a send buffer of sendBuffer (as far as wmem_max lets it), so a
// batch of upload chunks does not meet a full socket at every other write.
func TestAWorkerSocketGetsALargeSendBuffer(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "w.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	New(1, nc, nil, nil)
	rc, err := nc.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	_ = rc.Control(func(fd uintptr) {
		got, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := sendBuffer
	if b, err := os.ReadFile("/proc/sys/net/core/wmem_max"); err == nil {
		if limit, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && limit < want {
			want = limit
		}
	}
	// (Linux reports twice what was set: its own bookkeeping)
	if got < 2*want {
		t.Fatalf("SO_SNDBUF %d, want at least %d", got, 2*want)
	}
}
