//go:build unix

package listen

import (
	"net"
	"syscall"
	"testing"
	"time"

	"httpsys/router/internal/logger"
)

// A standalone app's handed-over listener accepts as node's server does: no TCP
// keep-alive on its connections (node sets none unless server.keepAlive asks), where
// Go's default for a listener made from a descriptor probes after 15 s.
func TestAnAdoptedListenerAcceptsWithoutKeepAlive(t *testing.T) {
	got := make(chan int, 1)
	l := New(logger.Discard(), 0, func(c net.Conn, _ int, _ bool, done func()) {
		defer done()
		defer c.Close()
		v := -1
		if rc, err := c.(syscall.Conn).SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) {
				v, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
			})
		}
		got <- v
	}, nil)
	bound, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// as nodeipc hands it over: a descriptor
	f, err := bound.(*net.TCPListener).File()
	_ = bound.Close()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.FileListener(f)
	_ = f.Close()
	if err != nil {
		t.Fatal(err)
	}
	port, serve, _, err := l.Adopt(ln, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.CloseAll()
	serve()
	if err := dial(port, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if v != 0 {
			t.Fatalf("SO_KEEPALIVE is %d on an accepted connection, want 0", v)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("not accepted")
	}
}

// A connection handed over (FileConn) keeps the keep-alive its socket had: none for one
// node accepted, and the app's own when it set one.
func TestAHandedOverConnectionKeepsItsKeepAlive(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, want := range []int{0, 1} {
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		_ = server.(*net.TCPConn).SetKeepAlive(want == 1)
		f, err := server.(*net.TCPConn).File()
		_ = server.Close()
		if err != nil {
			t.Fatal(err)
		}
		c, err := FileConn(f)
		_ = f.Close()
		if err != nil {
			t.Fatal(err)
		}
		v := -1
		rc, _ := c.(syscall.Conn).SyscallConn()
		_ = rc.Control(func(fd uintptr) {
			v, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
		})
		if v != want {
			t.Fatalf("SO_KEEPALIVE %d after the handover, the socket had %d", v, want)
		}
		_ = c.Close()
		_ = client.Close()
	}
}
