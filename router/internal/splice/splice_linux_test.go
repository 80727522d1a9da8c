//go:build linux

package splice

import (
	"bytes"
	"io"
	"net"
	"syscall"
	"testing"
)

func rawConn(t *testing.T, c net.Conn) syscall.RawConn {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// Bytes go from one socket to another through the pipe in order; what the destination
// does not take stays in the pipe for Read, and Drain never waits for it.
func TestAPipeMovesWhatTheDestinationTakesAndKeepsTheRest(t *testing.T) {
	srcA, srcB := socketPair(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	_ = server.(*net.TCPConn).SetWriteBuffer(16 << 10)

	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<20/16)
	go func() { _, _ = srcA.Write(data) }()

	// the client reads nothing: the socket fills, and Drain returns what it took
	var took, kept []byte
	left := len(data)
	for left > 0 {
		n, err := p.Fill(rawConn(t, srcB), left)
		if err != nil {
			t.Fatal(err)
		}
		left -= n
		m, err := p.Drain(rawConn(t, server), p.Buffered)
		if err != nil {
			t.Fatal(err)
		}
		took = append(took, data[len(took):len(took)+m]...)
		if p.Buffered > 0 {
			b := make([]byte, p.Buffered)
			if _, err := p.Read(b); err != nil {
				t.Fatal(err)
			}
			kept = append(kept, b...)
			if left > 0 {
				rest := make([]byte, left)
				if _, err := io.ReadFull(srcB, rest); err != nil {
					t.Fatal(err)
				}
				kept = append(kept, rest...)
				left = 0
			}
		}
	}
	if len(took) == 0 || len(took) == len(data) {
		t.Fatalf("the destination took %d of %d bytes: want some, not all", len(took), len(data))
	}
	got := make([]byte, len(took))
	if _, err := io.ReadFull(client, got); err != nil || !bytes.Equal(got, took) {
		t.Fatalf("the client read %d bytes, not the ones spliced (%v)", len(got), err)
	}
	if !bytes.Equal(append(took, kept...), data) {
		t.Fatal("spliced and kept bytes are not the source's, in order")
	}
	// the source's end
	_ = srcA.Close()
	if _, err := p.Fill(rawConn(t, srcB), 1); err != io.EOF {
		t.Fatalf("Fill at the source's end: %v", err)
	}
}

func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("unix", dir+"/s")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("unix", dir+"/s")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}
