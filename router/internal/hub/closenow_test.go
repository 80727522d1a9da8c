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
