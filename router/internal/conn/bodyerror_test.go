package conn_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/clock"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/logger"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/route"
	"httpsys/router/internal/wire"
)

// node's test-http-chunked-smuggling.js: a valid head and a malformed chunk-size line
// (a bare LF) in one read, a request smuggled behind them.
const smuggle = "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;\nxx\r\n4c\r\n0\r\n\r\n" +
	"GET /admin HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"

// oneQueue is a hub of one queue; the connections of an owned port are told of a
// worker when it attaches, as internal/hub does.
type oneQueue struct {
	q        *queue.Queue
	srv      *conn.Server
	attached chan struct{} // a worker's first ACK came: requests go to it
}

func (h oneQueue) Hello(*attach.Worker, *attach.Hello) (*queue.Queue, attach.Welcome, error) {
	return h.q, attach.Welcome{Queue: h.q.Name}, nil
}
func (h oneQueue) Attached(*attach.Worker) {
	h.srv.Announce(h.q)
	h.attached <- struct{}{}
}
func (oneQueue) Detached(*attach.Worker, string)      {}
func (oneQueue) Closed(*attach.Worker)                {}
func (oneQueue) EndConnection(*attach.Worker, uint32) {}

// ConnectionFrame: a worker's verdict on a connection of the owned port (CONN_WRITE,
// CONN_DESTROY), as internal/hub passes it on.
func (h oneQueue) ConnectionFrame(w *attach.Worker, t wire.Type, id uint32, p []byte) {
	h.srv.ConnectionFrame(w, t, id, p)
}

type rig struct {
	port     int
	sock     string
	attached chan struct{}
}

// newRig is a router with one queue on a plain port, shared (routed by its table) or
// owned by a standalone server, and a worker socket.
func newRig(t *testing.T, owned bool, bodyTimeout int64) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clk := clock.New()
	go clk.Run(ctx)
	l := conn.Limits{MaxHeaderSize: 16384, HeadersTimeout: 30000, KeepAliveTimeout: 30000, BodyTimeout: bodyTimeout, DrainTimeout: 30000, FinGrace: 1000}
	var table route.Table
	srv := conn.NewServer(&table, clk, logger.Discard(), l)
	clk.Every(srv.Sweep)
	q := queue.New("q", queue.Settings{Length: 1000})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if owned {
		srv.SetOwned(port, conn.Owned{KeepAliveTimeout: 30000, HeadersTimeout: 30000}, q)
	} else {
		p, err := route.Parse("http://+:"+strconv.Itoa(port)+"/", false)
		if err != nil {
			t.Fatal(err)
		}
		if err := table.Add(p, q); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go srv.Serve(nc, port, false, func() {})
		}
	}()
	sock := filepath.Join(t.TempDir(), "w.sock")
	wl, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	hub := oneQueue{q: q, srv: srv, attached: make(chan struct{}, 4)}
	go func() {
		for seq := uint64(1); ; seq++ {
			nc, err := wl.Accept()
			if err != nil {
				return
			}
			go attach.New(seq, nc, hub, logger.Discard()).Serve()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		_ = wl.Close()
		srv.Shutdown(time.Second)
		cancel()
	})
	return &rig{port: port, sock: sock, attached: hub.attached}
}

// fakeWorker speaks the wire as a worker whose ACKs the test sends itself.
type fakeWorker struct {
	t      *testing.T
	nc     net.Conn
	ww     *wire.Writer
	frames chan wire.Frame
	acked  uint32
}

func (r *rig) attach(t *testing.T) *fakeWorker {
	t.Helper()
	nc, err := net.Dial("unix", r.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	w := &fakeWorker{t: t, nc: nc, ww: wire.NewWriter(256), frames: make(chan wire.Frame, 64)}
	go func() {
		defer close(w.frames)
		rd := wire.NewReader(nc, 1<<16)
		for {
			f, err := rd.Next()
			if err != nil {
				return
			}
			f.Payload = append([]byte(nil), f.Payload...)
			w.frames <- f
		}
	}()
	js, _ := json.Marshal(map[string]any{"queue": "q", "pid": os.Getpid()})
	w.send(func(ww *wire.Writer) { _ = ww.JSON(wire.TypeHello, 0, js) })
	if f := w.next(wire.TypeHelloOK); f.Type != wire.TypeHelloOK {
		t.Fatalf("HELLO answered %v", f.Type)
	}
	w.send(func(ww *wire.Writer) { ww.U32(wire.TypeAck, 0, 0) })
	select {
	case <-r.attached:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not attach in 10 s")
	}
	return w
}

func (w *fakeWorker) send(fn func(ww *wire.Writer)) {
	w.t.Helper()
	fn(w.ww)
	if _, err := w.ww.WriteTo(w.nc); err != nil {
		w.t.Fatal(err)
	}
}

// ack acknowledges one more REQUEST, after what fn appends (what the app wrote in
// its handler precedes the ACK, as hub-client.js writes them).
func (w *fakeWorker) ack(fn func(ww *wire.Writer)) {
	w.acked++
	w.send(func(ww *wire.Writer) {
		if fn != nil {
			fn(ww)
		}
		ww.U32(wire.TypeAck, 0, w.acked)
	})
}

// next is the next frame of type want, those before it skipped (CONN_OPEN).
func (w *fakeWorker) next(want wire.Type) wire.Frame {
	w.t.Helper()
	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				w.t.Fatalf("the router closed the worker's connection before a %v", want)
			}
			if f.Type == want {
				return f
			}
		case <-time.After(10 * time.Second):
			w.t.Fatalf("no %v from the router in 10 s", want)
		}
	}
}

// noRequest: no REQUEST reaches the worker within d.
func (w *fakeWorker) noRequest(d time.Duration) {
	w.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				w.t.Fatal("the worker's connection closed: whether a request would reach it is not known")
			}
			if f.Type == wire.TypeRequest {
				r, _ := f.Request()
				w.t.Fatalf("a request for %q reached the worker", r.URL)
			}
		case <-deadline:
			return
		}
	}
}

func dialClient(t *testing.T, port int, text string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	return c
}

// readToClose is all the client gets until the router closes the connection.
func readToClose(t *testing.T, c net.Conn, within time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	got, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("%v after %q", err, got)
	}
	return string(got)
}

// silent: the client gets nothing within d.
func silent(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	var b [512]byte
	n, err := c.Read(b[:])
	if n > 0 || !isTimeout(err) {
		t.Fatalf("the client got %q (%v) while the worker had not acknowledged its request", b[:n], err)
	}
	_ = c.SetReadDeadline(time.Time{})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func helloWorld(id uint32) func(ww *wire.Writer) {
	return func(ww *wire.Writer) {
		_ = ww.Response(id, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: []byte("Content-Length: 11\r\n"), Body: []byte("hello world")})
	}
}

func firstRequest(t *testing.T, w *fakeWorker) wire.Frame {
	t.Helper()
	f := w.next(wire.TypeRequest)
	r, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	if string(r.URL) != "/" {
		t.Fatalf("the worker got %q", r.URL)
	}
	return f
}

// An app that answers in its 'request' listener: node writes the answer, then its
// socketOnError finds the response's headers sent and destroys the socket without a
// 400. The smuggled request never reaches the app.
// (an owned port's: its worker decides, ownbodyerror_test.go)
func TestABodyErrorBeforeTheWorkersAckLetsTheAppsAnswerOutAndClosesWithoutA400(t *testing.T) {
	r := newRig(t, false, 30000)
	w := r.attach(t)
	c := dialClient(t, r.port, smuggle)
	f := firstRequest(t, w)
	silent(t, c, 200*time.Millisecond)
	w.ack(helloWorld(f.ID))
	got := readToClose(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\nhello world") {
		t.Fatalf("the client got %q", got)
	}
	w.noRequest(200 * time.Millisecond)
}

// An app that has not answered when its handler returns: node's 400, then the close;
// the app's request is aborted.
func TestABodyErrorBeforeTheWorkersAckIsA400OnceTheAckSaysTheAppDidNotAnswer(t *testing.T) {
	r := newRig(t, false, 30000)
	w := r.attach(t)
	c := dialClient(t, r.port, smuggle)
	f := firstRequest(t, w)
	silent(t, c, 200*time.Millisecond)
	w.ack(nil)
	got := readToClose(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") || strings.Count(got, "HTTP/1.1 ") != 1 {
		t.Fatalf("the client got %q", got)
	}
	if a := w.next(wire.TypeAbort); a.ID != f.ID {
		t.Fatalf("ABORT for %d, the request was %d", a.ID, f.ID)
	}
	w.noRequest(200 * time.Millisecond)
}

// An app that began its answer in the handler (res.write()): node's socket is
// destroyed behind what it wrote, no 400; the request is aborted.
func TestABodyErrorBeforeTheWorkersAckCutsAnAnswerInProgressWithoutA400(t *testing.T) {
	r := newRig(t, false, 30000)
	w := r.attach(t)
	c := dialClient(t, r.port, smuggle)
	f := firstRequest(t, w)
	w.ack(func(ww *wire.Writer) {
		_ = ww.Response(f.ID, &wire.Response{Status: 200, Flags: wire.ResMore, Reason: []byte("OK"), HeaderBlock: []byte("Transfer-Encoding: chunked\r\n"), Body: []byte("5\r\nhello\r\n")})
	})
	got := readToClose(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\n5\r\nhello\r\n") {
		t.Fatalf("the client got %q", got)
	}
	if a := w.next(wire.TypeAbort); a.ID != f.ID {
		t.Fatalf("ABORT for %d, the request was %d", a.ID, f.ID)
	}
}

// The wait for the ACK is bounded by the body timeout: a worker that never
// acknowledges does not hold the connection.
func TestABodyErrorWhoseWorkerNeverAcksIsA400AfterTheBodyTimeout(t *testing.T) {
	r := newRig(t, false, 1000)
	w := r.attach(t)
	start := time.Now()
	c := dialClient(t, r.port, smuggle)
	firstRequest(t, w)
	silent(t, c, 500*time.Millisecond)
	got := readToClose(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
		t.Fatalf("the client got %q", got)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("the 400 came after %v, before the 1 s body timeout", waited)
	}
}

// A worker that dies before its ACK never saw the request: the 400, and no other
// worker gets it.
func TestABodyErrorWhoseWorkerDiesBeforeItsAckIsA400AndNotRequeued(t *testing.T) {
	r := newRig(t, false, 30000)
	w := r.attach(t)
	c := dialClient(t, r.port, smuggle)
	firstRequest(t, w)
	w2 := r.attach(t)
	_ = w.nc.Close()
	got := readToClose(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
		t.Fatalf("the client got %q", got)
	}
	w2.noRequest(200 * time.Millisecond)
}

// A request still waiting for a worker on a shared port is not at any app yet: its
// body error is the router's 400 at once, and it never reaches one (README "The
// router's rules").
func TestABodyErrorOfARequestNoWorkerHasIsA400AtOnceOnASharedPort(t *testing.T) {
	r := newRig(t, false, 30000)
	c := dialClient(t, r.port, smuggle)
	got := readToClose(t, c, 2*time.Second) // at once: the body timeout is 30 s
	if !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
		t.Fatalf("the client got %q", got)
	}
	w := r.attach(t)
	w.noRequest(300 * time.Millisecond)
}

// A body the client's FIN cuts short is the same error to node (socketOnEnd hands the
// parser's finish() error to socketOnError): an answer the app gave in its handler goes
// out, no 400.
func TestABodyCutShortByTheFinBeforeTheWorkersAckLetsTheAppsAnswerOut(t *testing.T) {
	r := newRig(t, false, 30000)
	w := r.attach(t)
	c := dialClient(t, r.port, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc")
	f := firstRequest(t, w)
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	silent(t, c, 200*time.Millisecond)
	w.ack(helloWorld(f.ID))
	got := readToClose(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\nhello world") {
		t.Fatalf("the client got %q", got)
	}
}
