package hub

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/wire"
)

// A client whose request says Connection: close gets its answer and the router's FIN,
// and the router lets the connection go at once: it does not hold it (and its share of
// maxConnections) until the client closes too or 5 s pass, since such a client sends
// nothing more (RFC 9112 9.6; node's server closes right after its FIN too).
func TestAConnectionCloseRequestsConnectionEndsAtTheRouterWithoutWaitingForTheClient(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	go func() {
		for f := range fw.frames {
			if f.Type == wire.TypeRequest {
				fw.received++
				n := fw.received
				fw.send(func(w *wire.Writer) { w.U32(wire.TypeAck, 0, n) })
				fw.respond(f.ID, 200, "ok")
			}
		}
	}()
	nc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	if got := readResponse(t, nc, br); !strings.HasPrefix(got, "HTTP/1.1 200") || !strings.Contains(got, "Connection: close\r\n") {
		t.Fatalf("response %q", got)
	}
	_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the answer %v, want the router's FIN", err)
	}
	// the client keeps its socket open
	deadline := time.Now().Add(time.Second)
	for h.conns.Count() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open at the router 1 s after the answer, want 0", h.conns.Count())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// When the app closes a connection its client meant to keep (the client may have sent
// more already), the router half-closes and reads on until the client's FIN (RFC 9112
// 9.6's lingering close): what the client sends after the answer is read and dropped,
// not met with a reset that could cost the client the answer it has not read yet.
func TestAConnectionTheAppClosesLingersUntilTheClientsFIN(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	go func() {
		for f := range fw.frames {
			if f.Type == wire.TypeRequest {
				fw.received++
				n := fw.received
				fw.send(func(w *wire.Writer) {
					w.U32(wire.TypeAck, 0, n)
					_ = w.Response(f.ID, &wire.Response{Status: 200, Flags: wire.ResClose, Reason: []byte("OK"), HeaderBlock: []byte("Content-Length: 2\r\n"), Body: []byte("ok")})
				})
			}
		}
	}()
	nc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	if got := readResponse(t, nc, br); !strings.Contains(got, "Connection: close\r\n") {
		t.Fatalf("response %q", got)
	}
	_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the answer %v, want the router's FIN", err)
	}
	// a request the client sent before it saw the FIN
	if _, err := io.WriteString(nc, "GET /late HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := h.conns.Count(); n != 1 {
		t.Fatalf("%d connections at the router while the client has not closed, want 1 (lingering)", n)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after a late write %v, want EOF, not a reset", err)
	}
	_ = nc.Close()
	deadline := time.Now().Add(time.Second)
	for h.conns.Count() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the connection stayed open at the router after the client's close")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
