package hub

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/wire"
)

// sendConnIdle writes the worker's CONN_IDLE (closeIdleConnections(), close()) by hand.
func (fw *fakeWorker) sendConnIdle(connID uint32, answered byte) {
	b := make([]byte, 0, 10)
	b = binary.LittleEndian.AppendUint32(b, 6)
	b = append(b, byte(wire.TypeConnIdle))
	b = binary.LittleEndian.AppendUint32(b, connID)
	b = append(b, answered)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if _, err := fw.nc.Write(b); err != nil {
		fw.t.Logf("worker write: %v", err)
	}
}

// ownedPathServer is a standalone server on a Unix socket with its worker attached,
// and one client connection of it that has been answered once.
func ownedPathServer(t *testing.T) (*fakeWorker, net.Conn, *bufio.Reader, uint32) {
	t.Helper()
	_, fw, file := pathQueue(t)
	c, err := net.Dial("unix", file)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	id, r := fw.nextRequest(true)
	fw.respond(id, 200, "one")
	br := bufio.NewReader(c)
	if res := readResponse(t, c, br); !strings.HasSuffix(res, "one") {
		t.Fatalf("client got %q", res)
	}
	return fw, c, br, r.ConnectionID
}

// closeIdleConnections() on the native router (issue 25, the idle race of
// preload-fidelity "close() soon after end()"): the worker's CONN_IDLE answered 1
// that finds the next request's head being read keeps the connection, as node's
// parser in that request would, and says so (CONN_KEPT) before that REQUEST: the
// worker serves what comes after this answer, and drops a REQUEST that came before it
// (one the router read before it heard of the close). CONN_IDLE answered 0 (a
// 'request' listener still running) keeps it with nothing to say.
func TestACloseIdleThatFindsAHeadComingIsAnsweredConnKeptBeforeThatRequest(t *testing.T) {
	fw, c, br, connID := ownedPathServer(t)
	if _, err := io.WriteString(c, "GET /2 HTTP/1.1\r\nHo"); err != nil {
		t.Fatal(err)
	}
	// (the router has read the half head once CONN_IDLE 0 finds nothing to end: it
	// answers CONN_IDLE 1 of the same read state below)
	time.Sleep(100 * time.Millisecond)
	fw.sendConnIdle(connID, 0)
	fw.sendConnIdle(connID, 1)
	f := fw.next()
	if f.Type != wire.TypeConnKept || f.ID != connID {
		t.Fatalf("after CONN_IDLE the worker got %v for %d, want CONN_KEPT for connection %d", f.Type, f.ID, connID)
	}
	if f2 := fw.peek(); f2.Type != 0 {
		t.Fatalf("a second frame %v: CONN_IDLE 0 must say nothing", f2.Type)
	}
	if _, err := io.WriteString(c, "st: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	id, r := fw.nextRequest(true)
	if string(r.URL) != "/2" || r.ConnectionID != connID {
		t.Fatalf("REQUEST %s on %d", r.URL, r.ConnectionID)
	}
	fw.respond(id, 200, "two")
	if res := readResponse(t, c, br); !strings.HasSuffix(res, "two") {
		t.Fatalf("client got %q", res)
	}
}

// peek: the next frame within 200 ms, or none (Type 0).
func (fw *fakeWorker) peek() wire.Frame {
	select {
	case f := <-fw.frames:
		return f
	case <-time.After(200 * time.Millisecond):
		return wire.Frame{}
	}
}

// An idle connection is ended by CONN_IDLE answered 1 without CONN_KEPT: the worker
// then knows no request of it may come.
func TestACloseIdleOfAnIdleConnectionEndsItWithoutConnKept(t *testing.T) {
	fw, c, br, connID := ownedPathServer(t)
	fw.sendConnIdle(connID, 1)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the client read %q, %v: want the connection ended", b, err)
	}
	_ = c.Close()
	for {
		f := fw.next()
		if f.Type == wire.TypeConnKept {
			t.Fatal("CONN_KEPT for a connection ended")
		}
		if f.Type == wire.TypeConnClosed || f.Type == 0 {
			return
		}
	}
}
