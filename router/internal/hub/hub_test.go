package hub

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"httpsys/router/internal/clock"
	"httpsys/router/internal/logger"
	"httpsys/router/internal/wire"
)

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Event(name string, fields any) {
	js, _ := json.Marshal(fields)
	r.mu.Lock()
	r.events = append(r.events, name+" "+string(js))
	r.mu.Unlock()
}

func startHub(t *testing.T, mayCreate bool, tune func(*Limits)) (*Hub, *recorder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := clock.New()
	go c.Run(ctx)
	ev := &recorder{}
	h := New(logger.Discard(), ev, c)
	l := DefaultLimits()
	if tune != nil {
		tune(&l)
	}
	sock := filepath.Join(t.TempDir(), "w.sock")
	if err := h.Start(StartOptions{WorkerSocket: sock, WorkersMayCreate: mayCreate, Limits: l}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		cancel()
	})
	return h, ev
}

// fakeWorker speaks the worker's side of the wire (src/queue/hub-client.js) by hand.
type fakeWorker struct {
	t        *testing.T
	nc       net.Conn
	mu       sync.Mutex
	w        *wire.Writer
	frames   chan wire.Frame
	received uint32
}

func attachWorker(t *testing.T, h *Hub, hello map[string]any) (*fakeWorker, wire.Frame) {
	t.Helper()
	nc, err := net.Dial("unix", h.socketPath)
	if err != nil {
		t.Fatal(err)
	}
	fw := &fakeWorker{t: t, nc: nc, w: wire.NewWriter(256), frames: make(chan wire.Frame, 1024)}
	t.Cleanup(func() { _ = nc.Close() })
	if _, ok := hello["pid"]; !ok {
		hello["pid"] = os.Getpid()
	}
	js, _ := json.Marshal(hello)
	fw.send(func(w *wire.Writer) { _ = w.JSON(wire.TypeHello, 0, js) })
	go func() {
		r := wire.NewReader(nc, 1<<16)
		for {
			f, err := r.Next()
			if err != nil {
				close(fw.frames)
				return
			}
			f.Payload = append([]byte(nil), f.Payload...)
			fw.frames <- f
		}
	}()
	first := fw.next()
	if first.Type == wire.TypeHelloOK {
		fw.send(func(w *wire.Writer) { w.U32(wire.TypeAck, 0, 0) })
	}
	return fw, first
}

func (fw *fakeWorker) send(fn func(w *wire.Writer)) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fn(fw.w)
	if _, err := fw.w.WriteTo(fw.nc); err != nil {
		fw.t.Logf("worker write: %v", err)
	}
}

func (fw *fakeWorker) next() wire.Frame {
	fw.t.Helper()
	select {
	case f, ok := <-fw.frames:
		if !ok {
			return wire.Frame{}
		}
		return f
	case <-time.After(5 * time.Second):
		fw.t.Fatal("no frame from the router in 5 s")
	}
	return wire.Frame{}
}

// nextRequest skips frames until a REQUEST and acknowledges it (if ack).
func (fw *fakeWorker) nextRequest(ack bool) (uint32, wire.Request) {
	fw.t.Helper()
	for {
		f := fw.next()
		if f.Type == 0 {
			fw.t.Fatal("the router closed the worker's connection")
		}
		if f.Type != wire.TypeRequest {
			continue
		}
		r, err := f.Request()
		if err != nil {
			fw.t.Fatal(err)
		}
		if ack {
			fw.received++
			n := fw.received
			fw.send(func(w *wire.Writer) { w.U32(wire.TypeAck, 0, n) })
		}
		return f.ID, r
	}
}

func (fw *fakeWorker) respond(id uint32, status int, body string) {
	fw.send(func(w *wire.Writer) {
		_ = w.Response(id, &wire.Response{
			Status: uint16(status), Reason: []byte("OK"),
			HeaderBlock: []byte("Content-Length: " + strconv.Itoa(len(body)) + "\r\n"), Body: []byte(body),
		})
	})
}

func createQueue(t *testing.T, h *Hub, name, token string) int {
	t.Helper()
	info, err := h.CreateQueue(name, QueueOptions{URLs: []string{"http://127.0.0.1:0/"}, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return info.Ports[0]
}

// exchange sends raw request bytes on a new connection and reads one response.
func exchange(t *testing.T, port int, raw string) (string, *bufio.Reader, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	return readResponse(t, c, br), br, c
}

func readResponse(t *testing.T, c net.Conn, br *bufio.Reader) string {
	t.Helper()
	head, body := readHeadAndBody(t, c, br, 5*time.Second)
	return head + string(body)
}

// readHeadAndBody reads one response's head, then its Content-Length body.
func readHeadAndBody(t *testing.T, c net.Conn, br *bufio.Reader, within time.Duration) (string, []byte) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	var head strings.Builder
	n := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a head: %v (so far %q)", err, head.String())
		}
		head.WriteString(line)
		if strings.HasPrefix(strings.ToLower(line), "content-length:") {
			n, _ = strconv.Atoi(strings.TrimSpace(line[15:]))
		}
		if line == "\r\n" {
			break
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		t.Fatalf("reading a body of %d: %v", n, err)
	}
	return head.String(), body
}

func TestARequestReachesTheWorkerOfItsQueueAndItsAnswerTheClient(t *testing.T) {
	h, ev := startHub(t, false, nil)
	port := createQueue(t, h, "app", "secret")
	fw, first := attachWorker(t, h, map[string]any{"queue": "app", "token": "secret"})
	if first.Type != wire.TypeHelloOK {
		t.Fatalf("HELLO answered %v", first.Type)
	}
	done := make(chan string)
	go func() {
		res, _, _ := exchange(t, port, "GET /a/../b?q=1 HTTP/1.1\r\nHost: x\r\nX-Y: 1\r\n\r\n")
		done <- res
	}()
	id, r := fw.nextRequest(true)
	if r.Method != "GET" || string(r.URL) != "/b?q=1" || r.Flags&wire.ReqKeepAlive == 0 {
		t.Fatalf("REQUEST %s %s flags %d", r.Method, r.URL, r.Flags)
	}
	fw.respond(id, 200, "hi")
	res := <-done
	if !strings.HasPrefix(res, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi") {
		t.Fatalf("client got %q", res)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.events) == 0 || !strings.HasPrefix(ev.events[0], `attach {"pid":`) {
		t.Fatalf("events %v, want attach first", ev.events)
	}
}

func TestAWorkerWithoutItsQueuesTokenIsRefused(t *testing.T) {
	h, _ := startHub(t, false, nil)
	createQueue(t, h, "app", "secret")
	_, first := attachWorker(t, h, map[string]any{"queue": "app", "token": "guess"})
	if first.Type != wire.TypeHelloErr {
		t.Fatalf("HELLO answered %v, want HELLO_ERR", first.Type)
	}
	_, js, _ := first.JSON()
	if !strings.Contains(string(js), `"code":"ERR_HTTPSYS_ATTACH_DENIED"`) {
		t.Fatalf("HELLO_ERR %s", js)
	}
	// and no worker may make a queue of its own on a supervisor's router
	_, first = attachWorker(t, h, map[string]any{"urls": []string{"http://127.0.0.1:0/"}})
	if _, js, _ := first.JSON(); first.Type != wire.TypeHelloErr || !strings.Contains(string(js), "ATTACH_DENIED") {
		t.Fatalf("anonymous HELLO answered %v %s", first.Type, js)
	}
}

func TestAWorkerOfAnotherProtocolVersionIsRefused(t *testing.T) {
	h, _ := startHub(t, true, nil)
	nc, err := net.Dial("unix", h.socketPath)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	w := wire.NewWriter(64)
	_ = w.JSON(wire.TypeHello, 0, []byte(`{"urls":["http://127.0.0.1:0/"]}`))
	b := make([]byte, 0, 64)
	buf := &bytesWriter{b}
	_, _ = w.WriteTo(buf)
	buf.b[9] = wire.Version + 1 // the version byte
	_, _ = nc.Write(buf.b)
	f, err := wire.NewReader(nc, 4096).Next()
	if err != nil || f.Type != wire.TypeHelloErr {
		t.Fatalf("got %v %v, want HELLO_ERR", f.Type, err)
	}
	if _, js, _ := f.JSON(); !strings.Contains(string(js), "ERR_HTTPSYS_PROTOCOL") {
		t.Fatalf("HELLO_ERR %s", js)
	}
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

func TestARequestItsWorkerNeverAcknowledgedGoesToTheNextOneAndASeenOneGets502(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	w1, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	res1 := make(chan string, 1)
	go func() { r, _, _ := exchange(t, port, "GET /unseen HTTP/1.1\r\nHost: x\r\n\r\n"); res1 <- r }()
	w1.nextRequest(false) // dies before its ACK
	_ = w1.nc.Close()
	w2, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	id, r := w2.nextRequest(true)
	if string(r.URL) != "/unseen" {
		t.Fatalf("second worker got %s", r.URL)
	}
	w2.respond(id, 200, "ok")
	if r := <-res1; !strings.HasPrefix(r, "HTTP/1.1 200") {
		t.Fatalf("the requeued request got %q", r)
	}
	res2 := make(chan string, 1)
	go func() { r, _, _ := exchange(t, port, "GET /seen HTTP/1.1\r\nHost: x\r\n\r\n"); res2 <- r }()
	w2.nextRequest(true)
	_ = w2.nc.Close()
	if r := <-res2; !strings.HasPrefix(r, "HTTP/1.1 502 Bad Gateway") {
		t.Fatalf("a request its worker saw and left got %q", r)
	}
}

func TestAFullQueueAnswers503WithRetryAfter(t *testing.T) {
	h, _ := startHub(t, false, func(l *Limits) { l.QueueLength = 0 })
	port := createQueue(t, h, "app", "")
	res, _, _ := exchange(t, port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if !strings.HasPrefix(res, "HTTP/1.1 503 Service Unavailable\r\n") || !strings.Contains(res, "Retry-After: 1\r\n") || !strings.Contains(res, "The request queue is full") {
		t.Fatalf("got %q", res)
	}
}

func TestManyClientsThroughTwoWorkersAllGetTheirOwnAnswers(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	for k := 0; k < 2; k++ {
		fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
		go func() {
			for {
				f, ok := <-fw.frames
				if !ok {
					return
				}
				if f.Type != wire.TypeRequest {
					continue
				}
				r, _ := f.Request()
				fw.received++
				n := fw.received
				fw.send(func(w *wire.Writer) {
					w.U32(wire.TypeAck, 0, n)
					_ = w.Response(f.ID, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: []byte(fmt.Sprintf("Content-Length: %d\r\n", len(r.URL))), Body: r.URL})
				})
			}
		}()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			nc, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			br := bufio.NewReader(nc)
			for i := 0; i < 50; i++ {
				path := fmt.Sprintf("/c%d/r%d", c, i)
				// two at a time, pipelined: their answers come back in order
				fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: x\r\n\r\nGET %s/b HTTP/1.1\r\nHost: x\r\n\r\n", path, path)
				for _, want := range []string{path, path + "/b"} {
					res := readResponse(t, nc, br)
					if !strings.HasSuffix(res, "\r\n\r\n"+want) {
						errs <- fmt.Errorf("connection %d wanted %s, got %q", c, want, res)
						return
					}
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestAQueuesURLsAndPortsKeepTheOrderGiven(t *testing.T) {
	h, _ := startHub(t, false, nil)
	// a fixed port, taken from the kernel and let go, after a port-0 prefix
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fixed := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	info, err := h.CreateQueue("app", QueueOptions{URLs: []string{"http://127.0.0.1:0/a/", "http://127.0.0.1:" + strconv.Itoa(fixed) + "/b/"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Ports) != 2 || info.Ports[1] != fixed || info.Ports[0] == fixed || info.Ports[0] == 0 {
		t.Fatalf("ports %v, want [the free port, %d]", info.Ports, fixed)
	}
	want := []string{"http://127.0.0.1:" + strconv.Itoa(info.Ports[0]) + "/a/", "http://127.0.0.1:" + strconv.Itoa(fixed) + "/b/"}
	if strings.Join(info.URLs, " ") != strings.Join(want, " ") {
		t.Fatalf("urls %v, want %v", info.URLs, want)
	}
}
