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

// A client that sends its request and its FIN at once (both queued before the router
// reads) is answered and the connection ends at once, not at the keep-alive timeout:
// the read that returns the request's bytes cannot say a FIN follows, so the router
// reads on until the socket says it has nothing more (EAGAIN) before it waits. A
// reader that waited after a short read lost such a FIN to Go's edge-triggered poller
// (tried in bench/results/router-profile.md round 4).
func TestARequestAndItsClientsFINSentTogetherAreAnsweredAndTheConnectionEnds(t *testing.T) {
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
	for round := 0; round < 20; round++ {
		nc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = nc.(*net.TCPConn).CloseWrite()
		br := bufio.NewReader(nc)
		if got := readResponse(t, nc, br); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("round %d: response %q", round, got)
		}
		_ = nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("round %d: after the answer %v, want the router's FIN (the keep-alive timeout is 5 s)", round, err)
		}
		nc.Close()
	}
}
