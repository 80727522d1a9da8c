package h2

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/clock"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/logger"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/route"
	"httpsys/router/internal/wire"
)

// rig is a router with one queue on an https port served by this package: a TLS
// listener offering h2 (as the TLS side of the router will), and workers on a Unix
// socket speaking the wire by hand.
type rig struct {
	h     *Server // the h2 side, for a test that serves a plain conn itself
	t     testing.TB
	srv   *conn.Server
	q     *queue.Queue
	port  int
	wsock string
}

type rigHub struct{ r *rig }

func (h rigHub) Hello(w *attach.Worker, _ *attach.Hello) (*queue.Queue, attach.Welcome, error) {
	return h.r.q, attach.Welcome{Queue: h.r.q.Name}, nil
}
func (rigHub) Attached(*attach.Worker)         {}
func (rigHub) Detached(*attach.Worker, string) {}
func (rigHub) Closed(*attach.Worker)           {}
func (h rigHub) EndConnection(w *attach.Worker, id uint32) {
	h.r.srv.EndConnection(w, id)
}

func newRig(t testing.TB, tune func(l *conn.Limits, s *queue.Settings), opts ...func(r *rig, h *Server)) *rig {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clk := clock.New()
	go clk.Run(ctx)
	l := conn.Limits{MaxHeaderSize: 16384, HeadersTimeout: 30000, KeepAliveTimeout: 30000, BodyTimeout: 30000, DrainTimeout: 30000, FinGrace: 1000}
	qs := queue.Settings{Length: 1000}
	if tune != nil {
		tune(&l, &qs)
	}
	var table route.Table
	srv := conn.NewServer(&table, clk, logger.Discard(), l)
	clk.Every(srv.Sweep)
	r := &rig{t: t, srv: srv, q: queue.New("q", qs)}
	h := New(srv)
	srv.ServeH2 = h.ServeSecure
	r.h = h

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	r.port = ln.Addr().(*net.TCPAddr).Port
	p, err := route.Parse("https://localhost:"+strconv.Itoa(r.port)+"/", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := table.Add(p, r.q); err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(r, h)
	}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				tc := nc.(*tls.Conn)
				if tc.HandshakeContext(ctx) != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
					_ = nc.Close()
					return
				}
				srv.ServeH2(tc, r.port, false, func() {}, nil)
			}()
		}
	}()

	r.wsock = filepath.Join(t.TempDir(), "w.sock")
	wl, err := net.Listen("unix", r.wsock)
	if err != nil {
		t.Fatal(err)
	}
	var seq uint64
	go func() {
		for {
			nc, err := wl.Accept()
			if err != nil {
				return
			}
			seq++
			w := attach.New(seq, nc, rigHub{r}, logger.Discard())
			go w.Serve()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		_ = wl.Close()
		srv.Shutdown(time.Second)
		cancel()
	})
	return r
}

func selfSigned(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// client is an http2.Transport client of the rig (h2 only).
func (r *rig) client() *http.Client {
	tr := &http2.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}}
	r.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func (r *rig) url(path string) string {
	return "https://localhost:" + strconv.Itoa(r.port) + path
}

// dial opens a raw h2 connection: the preface and an empty SETTINGS are sent.
func (r *rig) dial(settings ...http2.Setting) (*tls.Conn, *http2.Framer) {
	r.t.Helper()
	tc, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(r.port), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}, ServerName: "localhost"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = tc.Close() })
	if _, err := tc.Write([]byte(http2.ClientPreface)); err != nil {
		r.t.Fatal(err)
	}
	fr := http2.NewFramer(tc, tc)
	fr.ReadMetaHeaders = nil
	if err := fr.WriteSettings(settings...); err != nil {
		r.t.Fatal(err)
	}
	return tc, fr
}

// ---- a worker by hand ----

type worker struct {
	t        testing.TB
	nc       net.Conn
	mu       sync.Mutex
	w        *wire.Writer
	frames   chan wire.Frame
	received uint32
}

func (r *rig) worker() *worker {
	r.t.Helper()
	nc, err := net.Dial("unix", r.wsock)
	if err != nil {
		r.t.Fatal(err)
	}
	fw := &worker{t: r.t, nc: nc, w: wire.NewWriter(256), frames: make(chan wire.Frame, 1<<16)}
	r.t.Cleanup(func() { _ = nc.Close() })
	js, _ := json.Marshal(map[string]any{"queue": "q", "pid": os.Getpid()})
	fw.send(func(w *wire.Writer) { _ = w.JSON(wire.TypeHello, 0, js) })
	go func() {
		rd := wire.NewReader(nc, 1<<16)
		for {
			f, err := rd.Next()
			if err != nil {
				close(fw.frames)
				return
			}
			f.Payload = append([]byte(nil), f.Payload...)
			fw.frames <- f
		}
	}()
	if f := fw.next(); f.Type != wire.TypeHelloOK {
		r.t.Fatalf("HELLO answered %v", f.Type)
	}
	fw.send(func(w *wire.Writer) { w.U32(wire.TypeAck, 0, 0) })
	return fw
}

func (fw *worker) send(fn func(w *wire.Writer)) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fn(fw.w)
	_, _ = fw.w.WriteTo(fw.nc)
}

func (fw *worker) next() wire.Frame {
	fw.t.Helper()
	select {
	case f, ok := <-fw.frames:
		if !ok {
			return wire.Frame{}
		}
		return f
	case <-time.After(10 * time.Second):
		fw.t.Fatal("no frame from the router in 10 s")
	}
	return wire.Frame{}
}

// request skips frames to the next REQUEST and acknowledges it.
func (fw *worker) request() (uint32, wire.Request) {
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
		fw.received++
		n := fw.received
		fw.send(func(w *wire.Writer) { w.U32(wire.TypeAck, 0, n) })
		return f.ID, r
	}
}

func (fw *worker) respond(id uint32, status int, block, body string, flags uint8) {
	fw.send(func(w *wire.Writer) {
		_ = w.Response(id, &wire.Response{Status: uint16(status), Flags: flags, Reason: []byte("OK"), HeaderBlock: []byte(block), Body: []byte(body)})
	})
}

func (fw *worker) resBody(id uint32, flags uint8, body []byte) {
	fw.send(func(w *wire.Writer) { _ = w.ResBody(id, flags, body) })
}

func fields(r wire.Request) [][2]string {
	var out [][2]string
	for n, v := range r.Fields.All() {
		out = append(out, [2]string{string(n), string(v)})
	}
	return out
}
