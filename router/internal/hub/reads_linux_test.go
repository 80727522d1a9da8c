package hub

import (
	"bufio"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"httpsys/router/internal/wire"
)

// syscr is the process's read syscalls so far (proc(5) /proc/pid/io).
func syscr(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io:", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "syscr: "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Skip("no syscr in /proc/self/io")
	return 0
}

// A keep-alive request costs the router one read of the client's socket, not a second
// one that finds it empty before the connection waits (conn/rawread_unix.go; issue 25's
// CPU per request). Counted for the whole test process over sequential requests on one
// connection: the client's reads and the fake worker's are the same either way, so a
// second router read per request shows as one more read per request.
func TestAKeepAliveRequestCostsTheRouterOneReadOfTheClientsSocket(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	nc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
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
	one := func() {
		if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if got := readResponse(t, nc, br); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("response %q", got)
		}
	}
	for i := 0; i < 20; i++ {
		one()
	}
	const n = 400
	before := syscr(t)
	for i := 0; i < n; i++ {
		one()
	}
	per := float64(syscr(t)-before) / n
	t.Logf("%.2f reads per request in the whole process", per)
	// Sequential requests: every reader but the router's of the client reads its data
	// and then finds its socket empty before it waits (the client, the fake worker, the
	// router's reader of the worker: 6); the router's reader of the client reads once.
	// Before: 7.9-8.3, after: 7.0-7.2.
	if per > 7.5 {
		t.Fatalf("%.2f reads per request in the whole process, want at most 7.5", per)
	}
}
