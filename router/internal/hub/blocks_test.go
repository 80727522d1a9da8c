package hub

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"httpsys/router/internal/wire"
)

// Request bodies are read into blocks that go to the worker by reference (conn/blocks.go):
// a block is read into again only once nothing references it. Two uploads sent in one
// write, the second chunked in pieces of every size and pipelined behind the first (its
// bytes share the first's reads, and wait, unrouted, until the first is answered), with
// credit granted late and in small steps: each worker request gets its body whole and
// in order.
func TestPipelinedUploadsSharingReadsReachTheWorkerWholeWithCreditInSmallSteps(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	nc, br := dial(t, port)
	a := pattern(700<<10+13, 1)
	b := pattern(600<<10+7, 2)
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(a))
	raw.Write(a)
	raw.WriteString("POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	for rest, n := b, 1; len(rest) > 0; n = n*3%40000 + 1 {
		k := min(n, len(rest))
		fmt.Fprintf(&raw, "%x\r\n", k)
		raw.Write(rest[:k])
		raw.WriteString("\r\n")
		rest = rest[k:]
	}
	raw.WriteString("0\r\n\r\n")
	go func() { _, _ = nc.Write(raw.Bytes()) }()
	for _, want := range [][]byte{a, b} {
		id, _ := fw.nextRequest(true)
		var got []byte
		owed := 0
		for {
			f := fw.next()
			if f.Type == 0 {
				t.Fatal("the router closed the worker's connection")
			}
			if f.ID != id || (f.Type != wire.TypeBody && f.Type != wire.TypeBodyEnd) {
				continue
			}
			if f.Type == wire.TypeBodyEnd {
				break
			}
			got = append(got, f.Payload...)
			// late and small: the client's reads go on into new blocks while earlier
			// ones wait in the router for credit
			if owed += len(f.Payload); owed >= 20<<10 {
				time.Sleep(time.Millisecond)
				n := uint32(owed)
				owed = 0
				fw.send(func(w *wire.Writer) { w.U32(wire.TypeRead, id, n) })
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("the worker got %d bytes, not the %d sent, in order (first difference at %d)", len(got), len(want), firstDiff(got, want))
		}
		fw.respond(id, 200, "ok")
		if _, body := readHeadAndBody(t, nc, br, 5*time.Second); string(body) != "ok" {
			t.Fatalf("%q", body)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Body bytes sent before the worker acknowledged the request are kept for a replay
// (conn/held.go pins them in the request's ring): a worker that granted credit (more
// than the ring holds) but never acknowledged the request dies once it got most of
// the body, and the next worker gets the whole body, in order.
func TestAnUploadsWorkerDyingBeforeItsAckLeavesTheWholeBodyForTheNext(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	w1, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	nc, br := dial(t, port)
	body := pattern(1<<20+5, 3)
	go func() {
		fmt.Fprintf(nc, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))
		_, _ = nc.Write(body)
	}()
	first, _ := w1.nextRequest(false)
	w1.send(func(w *wire.Writer) { w.U32(wire.TypeRead, first, 600<<10) })
	seen := 0
	for seen < 600<<10 {
		f := w1.next()
		if f.Type == wire.TypeBody {
			seen += len(f.Payload)
		}
	}
	time.Sleep(20 * time.Millisecond) // the router reads on and holds what it may
	_ = w1.nc.Close()
	w2, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	id, _ := w2.nextRequest(true)
	w2.send(func(w *wire.Writer) { w.U32(wire.TypeRead, id, uint32(len(body))) })
	var got []byte
	for {
		f := w2.next()
		if f.Type == 0 {
			t.Fatal("the router closed the worker's connection")
		}
		if f.ID != id {
			continue
		}
		if f.Type == wire.TypeBodyEnd {
			break
		}
		if f.Type == wire.TypeBody {
			got = append(got, f.Payload...)
		}
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("the next worker got %d bytes, not the %d sent, in order (first difference at %d)", len(got), len(body), firstDiff(got, body))
	}
	w2.respond(id, 200, "ok")
	if _, b := readHeadAndBody(t, nc, br, 5*time.Second); string(b) != "ok" {
		t.Fatalf("%q", b)
	}
}
