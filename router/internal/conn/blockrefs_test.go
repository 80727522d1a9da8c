package conn_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
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

// Request bodies are read into pooled, reference-counted blocks (wire.Block,
// conn/blocks.go) that every connection's reads share. A reference let go too early
// hands one client's bytes to another's request; one never let go keeps a block from
// its pool for good. These tests end each path a held block takes with the pool's
// count of blocks out back at zero.

// blockHub: one queue, its worker announced to the connections when it attaches.
type blockHub struct {
	q        *queue.Queue
	attached chan struct{}
}

func (h blockHub) Hello(*attach.Worker, *attach.Hello) (*queue.Queue, attach.Welcome, error) {
	return h.q, attach.Welcome{Queue: h.q.Name}, nil
}
func (h blockHub) Attached(*attach.Worker)            { h.attached <- struct{}{} }
func (blockHub) Detached(*attach.Worker, string)      {}
func (blockHub) Closed(*attach.Worker)                {}
func (blockHub) EndConnection(*attach.Worker, uint32) {}

// blockWorker speaks the wire as a worker that grants no credit but its initial one.
type blockWorker struct {
	t      *testing.T
	nc     net.Conn
	frames chan wire.Frame
	acked  uint32
	offset int // how much of heldInBlocks' body bodyBytes checked
}

// newBlockRig: a router with one queue on a shared plain port, and its worker attached.
func newBlockRig(t *testing.T) (*conn.Server, int, *blockWorker) {
	return newBlockRigBuffering(t, 1024)
}

// newBlockRigBuffering: its worker's reader stops once frames frames wait unread.
func newBlockRigBuffering(t *testing.T, frames int) (*conn.Server, int, *blockWorker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clk := clock.New()
	go clk.Run(ctx)
	l := conn.Limits{MaxHeaderSize: 16384, HeadersTimeout: 30000, KeepAliveTimeout: 30000, BodyTimeout: 30000, DrainTimeout: 30000, FinGrace: 1000}
	var table route.Table
	srv := conn.NewServer(&table, clk, logger.Discard(), l)
	q := queue.New("q", queue.Settings{Length: 100})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	p, err := route.Parse("http://+:"+strconv.Itoa(port)+"/", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := table.Add(p, q); err != nil {
		t.Fatal(err)
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
	hub := blockHub{q: q, attached: make(chan struct{}, 1)}
	go func() {
		nc, err := wl.Accept()
		if err != nil {
			return
		}
		attach.New(1, nc, hub, logger.Discard()).Serve()
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		_ = wl.Close()
		srv.Shutdown(time.Second)
		cancel()
	})
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	w := &blockWorker{t: t, nc: nc, frames: make(chan wire.Frame, frames)}
	go func() {
		defer close(w.frames)
		rd := wire.NewReader(nc, 1<<20)
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
	w.next(wire.TypeHelloOK)
	w.send(func(ww *wire.Writer) { ww.U32(wire.TypeAck, 0, 0) })
	select {
	case <-hub.attached:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not attach in 10 s")
	}
	srv.Announce(q)
	return srv, port, w
}

func (w *blockWorker) send(fn func(ww *wire.Writer)) {
	w.t.Helper()
	ww := wire.NewWriter(256)
	fn(ww)
	if _, err := ww.WriteTo(w.nc); err != nil {
		w.t.Fatal(err)
	}
}

// next is the next frame of type want, those before it skipped.
func (w *blockWorker) next(want wire.Type) wire.Frame {
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

// bodyBytes reads BODY frames until n bytes came, each the byte heldInBlocks' body has
// at its offset: a block given back while still in use would be written over by a
// later read, and the bytes would differ.
func (w *blockWorker) bodyBytes(n int) {
	w.t.Helper()
	for got := 0; got < n; {
		p := w.next(wire.TypeBody).Payload
		for i, b := range p {
			if want := byte((w.offset + i) % 251); b != want {
				w.t.Fatalf("body byte %d is %d, not %d", w.offset+i, b, want)
			}
		}
		w.offset += len(p)
		got += len(p)
	}
}

// heldInBlocks: a client whose upload's worker acknowledged its REQUEST and took its
// initial credit, and whose next bytes, a read that filled the connection's small
// buffer and one into a block, wait in the router for credit (bodyHold is not
// reached: the body is complete). It returns the client and the request's id.
func heldInBlocks(t *testing.T, srv *conn.Server, port int, w *blockWorker) (net.Conn, uint32) {
	t.Helper()
	const first, rest = 40 << 10, 60 << 10
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	body := make([]byte, first+rest)
	for i := range body {
		body[i] = byte(i % 251)
	}
	fmt.Fprintf(c, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n", len(body))
	if _, err := c.Write(body[:first]); err != nil {
		t.Fatal(err)
	}
	id := w.next(wire.TypeRequest).ID
	w.acked++
	n := w.acked
	w.send(func(ww *wire.Writer) { ww.U32(wire.TypeAck, 0, n) })
	w.bodyBytes(first)
	time.Sleep(50 * time.Millisecond) // the ACK reached the request
	if _, err := c.Write(body[first:]); err != nil {
		t.Fatal(err)
	}
	w.bodyBytes(wire.InitialBodyWindow - first)
	deadline := time.Now().Add(5 * time.Second)
	for srv.BlocksOut() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no body bytes were held in a block")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the rest of the body was read
	return c, id
}

func noBlocksOut(t *testing.T, srv *conn.Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for srv.BlocksOut() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d blocks still out of the pool", srv.BlocksOut())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An app that answers without reading all of the body (a 401, a 413 of its own): the
// router drops what it held of it, and the blocks those bytes were in go back to the
// pool, while the connection lives on.
func TestAnAnsweredRequestsUnreadBodyGivesItsBlocksBack(t *testing.T) {
	srv, port, w := newBlockRig(t)
	c, id := heldInBlocks(t, srv, port, w)
	w.send(func(ww *wire.Writer) {
		_ = ww.Response(id, &wire.Response{Status: 401, Reason: []byte("Unauthorized"), HeaderBlock: []byte("Content-Length: 2\r\n"), Body: []byte("no")})
	})
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 401 {
		t.Fatalf("the client got %v, %v", res, err)
	}
	noBlocksOut(t, srv)
}

// A client that resets its connection while its body waits in blocks for credit: the
// worker hears ABORT, and the blocks go back to the pool.
func TestAClientResetWhileItsBodyIsHeldInBlocksGivesThemBack(t *testing.T) {
	srv, port, w := newBlockRig(t)
	c, _ := heldInBlocks(t, srv, port, w)
	_ = c.(*net.TCPConn).SetLinger(0)
	_ = c.Close()
	w.next(wire.TypeAbort)
	noBlocksOut(t, srv)
}

// The credit comes: the held bytes go to the worker from their blocks, and once the
// batches that carried them are written the blocks go back to the pool.
func TestABodyHeldInBlocksSentOnCreditGivesThemBackOnceWritten(t *testing.T) {
	srv, port, w := newBlockRig(t)
	c, id := heldInBlocks(t, srv, port, w)
	w.send(func(ww *wire.Writer) { ww.U32(wire.TypeRead, id, 1<<20) })
	w.bodyBytes(100<<10 - wire.InitialBodyWindow)
	w.next(wire.TypeBodyEnd)
	w.send(func(ww *wire.Writer) {
		_ = ww.Response(id, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: []byte("Content-Length: 2\r\n"), Body: []byte("ok")})
	})
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the client got %v, %v", res, err)
	}
	noBlocksOut(t, srv)
}

// A worker that stops reading its socket while body bytes go to it from blocks, and
// then leaves: the batches its writer had not written yet are dropped, and the blocks
// they referenced go back to the pool.
func TestAWorkerThatLeavesWithBlocksInUnwrittenBatchesGivesThemBack(t *testing.T) {
	srv, port, w := newBlockRigBuffering(t, 2)
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	const size = 16 << 20
	fmt.Fprintf(c, "POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n", size)
	id := w.next(wire.TypeRequest).ID
	w.send(func(ww *wire.Writer) {
		ww.U32(wire.TypeAck, 0, 1)
		ww.U32(wire.TypeRead, id, size)
	})
	time.Sleep(50 * time.Millisecond) // the ACK reached the request
	go func() { _, _ = c.Write(make([]byte, size)) }()
	// the worker reads no more: its socket fills, and batches wait in the router
	deadline := time.Now().Add(5 * time.Second)
	for last := int64(-1); ; {
		time.Sleep(100 * time.Millisecond)
		n := srv.BlocksOut()
		if n > 1 && n == last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d blocks out: the body did not wait in batches", n)
		}
		last = n
	}
	_ = w.nc.Close()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 502 {
		t.Fatalf("the client got %v, %v", res, err)
	}
	_ = c.Close()
	noBlocksOut(t, srv)
}
