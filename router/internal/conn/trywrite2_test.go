//go:build unix

package conn

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// A response's queued head and a large body piece leave in one write, in that order, as
// far as the socket takes them; what it did not take is the caller's to queue.
func TestHeadAndBodyGoOutInOneWriteInOrder(t *testing.T) {
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

	head := []byte("HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\n\r\n")
	body := bytes.Repeat([]byte("0123456789abcdef"), 4<<20/16)
	want := append(append([]byte{}, head...), body...)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(want))))
		got <- b
	}()
	n, err := tryWrite2(server, head, body)
	if err != nil || n <= len(head) {
		t.Fatalf("wrote %d, %v: want the head and some of the body", n, err)
	}
	if _, err := server.Write(want[n:]); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the client read %d bytes, not the head then the body", len(b))
	}
}
