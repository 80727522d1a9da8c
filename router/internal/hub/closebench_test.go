package hub

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"httpsys/router/internal/clock"
	"httpsys/router/internal/logger"
	"httpsys/router/internal/wire"
)

// BenchmarkConnectionClose is a connection per request (Connection: close) through the
// whole router over loopback: accept, parse, dispatch to a worker that answers every
// REQUEST at once, the response, the FIN and the close. Its allocations per op are the
// router's per connection plus the client's dial (issue 25: router CPU per connection).
func BenchmarkConnectionClose(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := clock.New()
	go c.Run(ctx)
	h := New(logger.Discard(), &recorder{}, c)
	sock := filepath.Join(b.TempDir(), "w.sock")
	if err := h.Start(StartOptions{WorkerSocket: sock, Limits: DefaultLimits()}); err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	info, err := h.CreateQueue("app", QueueOptions{URLs: []string{"http://127.0.0.1:0/"}, Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	port := info.Ports[0]
	wc, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer wc.Close()
	w := wire.NewWriter(256)
	js, _ := json.Marshal(map[string]any{"queue": "app", "token": "t", "pid": os.Getpid()})
	_ = w.JSON(wire.TypeHello, 0, js)
	if _, err := w.WriteTo(wc); err != nil {
		b.Fatal(err)
	}
	// the worker: acknowledges and answers each REQUEST as it comes
	go func() {
		r := wire.NewReader(wc, 1<<16)
		w := wire.NewWriter(4096)
		var n uint32
		body := []byte("hello world\n")
		head := []byte("Content-Type: text/plain\r\nContent-Length: 12\r\n")
		for {
			f, err := r.Next()
			if err != nil {
				return
			}
			switch f.Type {
			case wire.TypeHelloOK:
				w.U32(wire.TypeAck, 0, 0)
			case wire.TypeRequest:
				n++
				w.U32(wire.TypeAck, 0, n)
				_ = w.Response(f.ID, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: head, Body: body})
			default:
				continue
			}
			if _, err := w.WriteTo(wc); err != nil {
				return
			}
		}
	}()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	req := []byte("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	buf := make([]byte, 4096)
	one := func() {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			n, err := nc.Read(buf[got:])
			got += n
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if got < 12 || string(buf[:12]) != "HTTP/1.1 200" {
			b.Fatalf("got %q", buf[:got])
		}
		_ = nc.Close()
	}
	for i := 0; i < 100; i++ {
		one()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		one()
	}
}
