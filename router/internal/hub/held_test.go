package hub

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"httpsys/router/internal/wire"
)

// A body that outruns its worker's credit is held by the router and sent as credit
// comes (conn/held.go keeps it in one buffer per request): the worker gets every byte,
// in order, however the credit and the reads fall, request after request on one
// connection.
func TestAnUploadHeldForCreditReachesTheWorkerWholeRequestAfterRequest(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	nc, br := dial(t, port)
	for round := 0; round < 3; round++ {
		body := pattern(2<<20+round*4099, round)
		go func() {
			fmt.Fprintf(nc, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))
			_, _ = nc.Write(body)
		}()
		id, _ := fw.nextRequest(true)
		var got []byte
		owed := uint32(0)
		for {
			f := fw.next()
			if f.Type == 0 {
				t.Fatal("the router closed the worker's connection")
			}
			if f.ID != id {
				continue
			}
			if f.Type == wire.TypeBodyEnd {
				break
			}
			if f.Type != wire.TypeBody {
				continue
			}
			got = append(got, f.Payload...)
			// credit late and in steps: most of the body waits for it, and what waited
			// goes in bursts while the client's next bytes arrive
			owed += uint32(len(f.Payload))
			if owed >= 48<<10 {
				n := owed
				owed = 0
				fw.send(func(w *wire.Writer) { w.U32(wire.TypeRead, id, n) })
			}
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("round %d: the worker got %d bytes, not the %d sent in order", round, len(got), len(body))
		}
		fw.respond(id, 200, "ok")
		if _, b := readHeadAndBody(t, nc, br, 5*time.Second); string(b) != "ok" {
			t.Fatalf("round %d: %q", round, b)
		}
	}
}
