package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"httpsys/router/internal/clock"
	"httpsys/router/internal/logger"
	"httpsys/router/internal/wire"
)

// uploadRig is a router, a queue, a worker that grants credit as src/queue/hub-client.js
// does (512 KiB beyond what arrived, in steps of 128 KiB) and answers each request once
// its BODY_END came, and one keep-alive client connection; upload sends one 1 MB POST
// on it and reads the answer. The client and the worker allocate nothing per upload.
func uploadRig(tb testing.TB) (upload func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := clock.New()
	go c.Run(ctx)
	h := New(logger.Discard(), &recorder{}, c)
	sock := filepath.Join(tb.TempDir(), "w.sock")
	if err := h.Start(StartOptions{WorkerSocket: sock, Limits: DefaultLimits()}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		h.Close()
		cancel()
	})
	info, err := h.CreateQueue("app", QueueOptions{URLs: []string{"http://127.0.0.1:0/"}})
	if err != nil {
		tb.Fatal(err)
	}
	wc, err := net.Dial("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = wc.Close() })
	ww := wire.NewWriter(1 << 10)
	js, _ := json.Marshal(map[string]any{"queue": "app", "pid": os.Getpid()})
	_ = ww.JSON(wire.TypeHello, 0, js)
	_, _ = ww.WriteTo(wc)
	rd := wire.NewReader(wc, 1<<16)
	if f, err := rd.Next(); err != nil || f.Type != wire.TypeHelloOK {
		tb.Fatalf("HELLO: %v %v", f.Type, err)
	}
	ww.U32(wire.TypeAck, 0, 0)
	_, _ = ww.WriteTo(wc)
	go benchWorker(rd, wc, ww)

	const size = 1 << 20
	req := []byte(fmt.Sprintf("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size))
	req = append(req, make([]byte, size)...)
	cc, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", info.Ports[0]))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cc.Close() })
	br := bufio.NewReaderSize(cc, 4096)
	answer := make([]byte, 0, 256)
	return func() {
		if _, err := cc.Write(req); err != nil {
			tb.Fatal(err)
		}
		// "ok" with Content-Length: 2 when the worker got the whole body, "no" (a 500)
		// when it did not: the head, then the body
		answer = answer[:0]
		for !bytes.HasSuffix(answer, []byte("\r\n\r\nok")) && !bytes.HasSuffix(answer, []byte("\r\n\r\nno")) {
			c, err := br.ReadByte()
			if err != nil {
				tb.Fatal(err)
			}
			answer = append(answer, c)
		}
		if !bytes.HasPrefix(answer, []byte("HTTP/1.1 200")) {
			tb.Fatalf("the worker did not get the whole body: %q", answer)
		}
	}
}

// BenchmarkUpload1MB: -benchmem counts what the router allocates per 1 MB upload
// (bench/results/router-profile.md, "Uploads read into blocks").
func BenchmarkUpload1MB(b *testing.B) {
	upload := uploadRig(b)
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		upload()
	}
}

// The router passes an upload's body to its worker without a copy of its own: a body
// read into a block goes to the worker from it, and nothing per chunk is allocated (a
// clone per chunk held before the worker's ACK was about 440 KB per 1 MB upload).
func TestAnUploadCostsTheRouterNoCopyOfItsBody(t *testing.T) {
	if raceDetector {
		t.Skip("sync.Pool drops what is put back at random under the race detector")
	}
	upload := uploadRig(t)
	for i := 0; i < 3; i++ {
		upload() // the pools and buffers fill
	}
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		upload()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 64<<10 {
		t.Fatalf("%d bytes allocated per 1 MB upload, want under 64 KiB", per)
	}
}

// benchWorker serves BenchmarkUpload1MB's requests until its connection closes.
func benchWorker(rd *wire.Reader, wc io.Writer, ww *wire.Writer) {
	const target, step = 512 << 10, 128 << 10
	var acked uint32
	var received, granted int
	ok := &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: []byte("Content-Length: 2\r\n"), Body: []byte("ok")}
	short := &wire.Response{Status: 500, Reason: []byte("Short"), HeaderBlock: []byte("Content-Length: 2\r\n"), Body: []byte("no")}
	for {
		f, err := rd.Next()
		if err != nil {
			return
		}
		switch f.Type {
		case wire.TypeRequest:
			acked++
			received, granted = 0, wire.InitialBodyWindow
			ww.U32(wire.TypeAck, 0, acked)
			ww.U32(wire.TypeRead, f.ID, uint32(target-granted))
			granted = target
		case wire.TypeBody:
			received += len(f.Payload)
			if g := received + target - granted; g >= step {
				ww.U32(wire.TypeRead, f.ID, uint32(g))
				granted += g
			}
		case wire.TypeBodyEnd:
			if received == 1<<20 {
				_ = ww.Response(f.ID, ok)
			} else {
				_ = ww.Response(f.ID, short)
			}
		default:
			continue
		}
		if _, err := ww.WriteTo(wc); err != nil {
			return
		}
	}
}
