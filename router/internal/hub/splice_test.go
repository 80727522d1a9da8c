package hub

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/splice"
	"httpsys/router/internal/wire"
)

// Large response bodies go from the worker's socket to the client's in pieces (on
// Linux spliced: attach/stream.go, conn/stream.go); these hold that path to what the
// client must see whatever the client or the worker does meanwhile.

// pattern is n bytes no shift or cut would leave unchanged.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((i*7 + seed) % 251)
	}
	return b
}

func sized(n int) []byte { return []byte("Content-Length: " + strconv.Itoa(n) + "\r\n") }

// bothWays runs a test with bodies spliced (where the system can) and copied.
func bothWays(t *testing.T, test func(*testing.T, *Hub)) {
	for _, on := range []bool{true, false} {
		t.Run("splice="+strconv.FormatBool(on), func(t *testing.T) {
			h, _ := startHub(t, false, nil)
			h.SpliceBodies(on)
			test(t, h)
		})
	}
}

func dial(t *testing.T, port int) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc, bufio.NewReader(nc)
}

func TestLargeBodiesReachTheClientWholeAndInOrderWithOtherFramesBetween(t *testing.T) {
	bothWays(t, largeBodiesReachTheClientWholeAndInOrderWithOtherFramesBetween)
}

func largeBodiesReachTheClientWholeAndInOrderWithOtherFramesBetween(t *testing.T, h *Hub) {
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	a, abr := dial(t, port)
	b, bbr := dial(t, port)
	// pipelined on a: one RESPONSE frame of 3 MB (past the reader's kept buffer), then a
	// response in RES_BODY frames larger than the response window
	fmt.Fprint(a, "GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHost: x\r\n\r\n")
	one, _ := fw.nextRequest(true)
	two, _ := fw.nextRequest(true)
	fmt.Fprint(b, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
	small, _ := fw.nextRequest(true)

	bodyOne := pattern(3<<20, 1)
	bodyTwo := pattern(wire.ResponseWindow*3+12345, 2)
	go fw.send(func(w *wire.Writer) {
		_ = w.Response(one, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: sized(len(bodyOne)), Body: bodyOne})
		_ = w.Response(two, &wire.Response{Status: 200, Flags: wire.ResMore, Reason: []byte("OK"), HeaderBlock: sized(len(bodyTwo)), Body: bodyTwo[:100]})
		_ = w.ResBody(two, wire.ResMore, bodyTwo[100:500<<10])
		// a frame for another connection between two large ones
		_ = w.Response(small, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: sized(5), Body: []byte("small")})
		_ = w.ResBody(two, wire.ResMore, bodyTwo[500<<10:600<<10])
		_ = w.ResBody(two, 0, bodyTwo[600<<10:])
	})
	if head, body := readHeadAndBody(t, b, bbr, 5*time.Second); !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || string(body) != "small" {
		t.Fatalf("the other connection got %q %q", head, body)
	}
	for i, want := range [][]byte{bodyOne, bodyTwo} {
		head, body := readHeadAndBody(t, a, abr, 10*time.Second)
		if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || !bytes.Equal(body, want) {
			t.Fatalf("response %d: %q and a body of %d bytes, not the %d sent", i+1, head, len(body), len(want))
		}
	}
	// the connection goes on
	fmt.Fprint(a, "GET /three HTTP/1.1\r\nHost: x\r\n\r\n")
	three, _ := fw.nextRequest(true)
	fw.respond(three, 200, "three")
	if _, body := readHeadAndBody(t, a, abr, 5*time.Second); string(body) != "three" {
		t.Fatalf("after the large ones: %q", body)
	}
}

func TestAClientThatStopsReadingMidBodyHoldsUpNoOtherConnection(t *testing.T) {
	bothWays(t, aClientThatStopsReadingMidBodyHoldsUpNoOtherConnection)
}

func aClientThatStopsReadingMidBodyHoldsUpNoOtherConnection(t *testing.T, h *Hub) {
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	slow, slowBr := dial(t, port)
	fmt.Fprint(slow, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	big, _ := fw.nextRequest(true)
	quick, quickBr := dial(t, port)
	fmt.Fprint(quick, "GET /quick HTTP/1.1\r\nHost: x\r\n\r\n")
	q, _ := fw.nextRequest(true)

	// far more than the sockets between the router and the client hold: the router's
	// goroutine for this worker must not wait for the client to read
	body := pattern(32<<20, 3)
	go fw.send(func(w *wire.Writer) {
		_ = w.Response(big, &wire.Response{Status: 200, Flags: wire.ResMore, Reason: []byte("OK"), HeaderBlock: sized(len(body))})
		for off := 0; off < len(body); off += 1 << 20 {
			flags := uint8(wire.ResMore)
			if off+1<<20 >= len(body) {
				flags = 0
			}
			_ = w.ResBody(big, flags, body[off:min(off+1<<20, len(body))])
		}
		_ = w.Response(q, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: sized(5), Body: []byte("quick")})
	})
	if _, b := readHeadAndBody(t, quick, quickBr, 5*time.Second); string(b) != "quick" {
		t.Fatalf("the other connection got %q", b)
	}
	// the client that did not read gets every byte once it does
	head, got := readHeadAndBody(t, slow, slowBr, 20*time.Second)
	if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || !bytes.Equal(got, body) {
		t.Fatalf("the slow client got %q and %d bytes, not the %d sent", head, len(got), len(body))
	}
}

// (copied, a frame is read whole before its head goes out: the client gets a 502)
func TestAWorkerThatDiesMidBodyClosesItsClientAndNoOther(t *testing.T) {
	if !splice.Supported {
		t.Skip("bodies are spliced on Linux only")
	}
	h, _ := startHub(t, false, nil)
	h.SpliceBodies(true)
	aWorkerThatDiesMidBodyClosesItsClientAndNoOther(t, h)
}

func aWorkerThatDiesMidBodyClosesItsClientAndNoOther(t *testing.T, h *Hub) {
	port := createQueue(t, h, "app", "")
	workers := [2]*fakeWorker{}
	workers[0], _ = attachWorker(t, h, map[string]any{"queue": "app"})
	workers[1], _ = attachWorker(t, h, map[string]any{"queue": "app"})
	cut, cutBr := dial(t, port)
	fmt.Fprint(cut, "GET /cut HTTP/1.1\r\nHost: x\r\n\r\n")
	w1, id := eitherRequest(t, workers)
	w2 := workers[0]
	if w2 == w1 {
		w2 = workers[1]
	}
	other, otherBr := dial(t, port)
	fmt.Fprint(other, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n")
	w, oid := eitherRequest(t, workers)
	if w != w2 {
		t.Fatal("the second request went to the busy worker")
	}

	// one RESPONSE frame of 2 MB of which the worker writes 700 KB, then dies
	body := pattern(2<<20, 4)
	var frame bytes.Buffer
	fw := wire.NewWriter(256)
	_ = fw.Response(id, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: sized(len(body)), Body: body})
	_, _ = fw.WriteTo(&frame)
	if _, err := w1.nc.Write(frame.Bytes()[:700<<10]); err != nil {
		t.Fatal(err)
	}
	_ = cut.SetReadDeadline(time.Now().Add(5 * time.Second))
	head, err := cutBr.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "HTTP/1.1 200 OK") {
		t.Fatalf("the head before the cut: %q %v", head, err)
	}
	time.Sleep(50 * time.Millisecond) // the router is waiting for the rest of the frame
	_ = w1.nc.Close()
	_ = cut.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(cutBr)
	if err != nil {
		t.Fatalf("the cut client's connection did not end: %v", err)
	}
	if len(got) >= len(body) {
		t.Fatalf("the cut client read %d bytes: the body was not cut", len(got))
	}
	// the other connection, on the other worker, goes on
	w2.respond(oid, 200, "fine")
	if _, b := readHeadAndBody(t, other, otherBr, 5*time.Second); string(b) != "fine" {
		t.Fatalf("the other connection got %q", b)
	}
	fmt.Fprint(other, "GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
	again, _ := w2.nextRequest(true)
	w2.respond(again, 200, "again")
	if _, b := readHeadAndBody(t, other, otherBr, 5*time.Second); string(b) != "again" {
		t.Fatalf("the other connection's next answer: %q", b)
	}
}

// eitherRequest waits for a REQUEST at either worker and acknowledges it.
func eitherRequest(t *testing.T, ws [2]*fakeWorker) (*fakeWorker, uint32) {
	t.Helper()
	for {
		var f wire.Frame
		var fw *fakeWorker
		select {
		case f = <-ws[0].frames:
			fw = ws[0]
		case f = <-ws[1].frames:
			fw = ws[1]
		case <-time.After(5 * time.Second):
			t.Fatal("no REQUEST at either worker in 5 s")
		}
		if f.Type != wire.TypeRequest {
			continue
		}
		fw.received++
		n := fw.received
		fw.send(func(w *wire.Writer) { w.U32(wire.TypeAck, 0, n) })
		return fw, f.ID
	}
}
