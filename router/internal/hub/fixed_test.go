package hub

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"httpsys/router/internal/conn"
	"httpsys/router/internal/wire"
)

// A standalone server's listen(path) (issue 25 "Standalone"): every request on its
// Unix socket goes to its queue, whatever its Host and path, as a
// connection of a port it owns; its close() stops the socket and leaves the file to
// the app's side (node's close() unlinks it there).
func TestAPathQueueServesEveryRequestOnItsSocketAndUnbindClosesIt(t *testing.T) {
	h, fw, file := pathQueue(t)
	c, err := net.Dial("unix", file)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// no prefix routes here: any Host and any path reach the queue, the target as sent
	if _, err := io.WriteString(c, "GET /any/../where HTTP/1.1\r\nHost: nowhere.example\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	id, r := fw.nextRequest(true)
	if string(r.URL) != "/any/../where" || r.LocalPort != 0 {
		t.Fatalf("REQUEST %s local port %d, want the target as sent and port 0", r.URL, r.LocalPort)
	}
	fw.respond(id, 200, "p")
	if res := readResponse(t, c, bufio.NewReader(c)); !strings.HasSuffix(res, "\r\n\r\np") {
		t.Fatalf("client got %q", res)
	}
	if err := h.UnbindQueue("~1.listen1"); err != nil {
		t.Fatal(err)
	}
	if c2, err := net.Dial("unix", file); err == nil {
		_ = c2.Close()
		t.Fatal("the path still accepts after close()")
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the router removed the socket file: %v", err)
	}
}

// pathQueue is a router with a standalone server's listen(path) queue, ~1.listen1, on
// the Unix socket file (left in place when it closes, as node's side unlinks it), and
// the server's worker attached.
func pathQueue(t *testing.T) (*Hub, *fakeWorker, string) {
	t.Helper()
	h, _ := startHub(t, false, nil)
	file := filepath.Join(t.TempDir(), "app.sock")
	ln, err := net.Listen("unix", file)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if _, err := h.AdoptPathQueue(ln, "~1.listen1", "tok", conn.Owned{KeepAliveTimeout: 5000, HeadersTimeout: 60000}); err != nil {
		t.Fatal(err)
	}
	fw, first := attachWorker(t, h, map[string]any{"queue": "~1.listen1", "token": "tok"})
	if first.Type != wire.TypeHelloOK {
		t.Fatalf("HELLO answered %v", first.Type)
	}
	return h, fw, file
}

func TestAPathQueueTakesOnlyAUnixListener(t *testing.T) {
	h, _ := startHub(t, false, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.AdoptPathQueue(ln, "q", "tok", conn.Owned{}); err == nil {
		t.Fatal("a TCP listener was taken as a path")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("the refused listener was left open")
	}
}

// listen(prefix) (adopt.go): the first server of a port hands its socket over, the
// next one finds the port listening; the table routes between them.
func TestSharedQueuesRouteOnePortByPrefix(t *testing.T) {
	h, _ := startHub(t, false, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	if _, err := h.AdoptQueue("a", QueueOptions{URLs: []string{base + "/a/"}, Token: "ta"}, Adoption{Listener: ln, IP: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.AdoptQueue("b", QueueOptions{URLs: []string{base + "/b/"}, Token: "tb"}, Adoption{}); err != nil {
		t.Fatal(err)
	}
	fa, _ := attachWorker(t, h, map[string]any{"queue": "a", "token": "ta"})
	fb, _ := attachWorker(t, h, map[string]any{"queue": "b", "token": "tb"})
	for _, c := range []struct {
		path string
		w    *fakeWorker
	}{{"/b/x", fb}, {"/a/y", fa}} {
		done := make(chan string)
		go func() {
			res, _, _ := exchange(t, port, "GET "+c.path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			done <- res
		}()
		id, r := c.w.nextRequest(true)
		if string(r.URL) != c.path {
			t.Fatalf("REQUEST %s, want %s", r.URL, c.path)
		}
		c.w.respond(id, 200, c.path)
		if res := <-done; !strings.HasSuffix(res, c.path) {
			t.Fatalf("client got %q", res)
		}
	}
	if res, _, _ := exchange(t, port, "GET /c HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); !strings.HasPrefix(res, "HTTP/1.1 404 ") {
		t.Fatalf("a path no server registered: %q", res)
	}
	// (the second queue's own prefix binds nothing: the port is the first one's socket)
	if _, err := h.AdoptQueue("c", QueueOptions{URLs: []string{base + "/a/"}, Token: "tc"}, Adoption{}); err == nil {
		t.Fatal("a prefix taken was reserved again")
	}
}

// A listen(port) and a listen(prefix) of one standalone app on one port (adopt.go):
// the port stops being the first server's own when the prefix joins, and the table
// routes it, the prefix's path to its server and the rest to the port's, as the
// removed JS hub did; a settings change of the port's server after that (an app
// sets them right after listen()) does not make the port its own again.
func TestAPrefixJoiningAnOwnedPortSharesItByURL(t *testing.T) {
	h, _ := startHub(t, false, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	own := conn.Owned{KeepAliveTimeout: 5000, HeadersTimeout: 60000, RequireHost: true}
	if _, err := h.AdoptQueue("a", QueueOptions{URLs: []string{base + "/"}, Token: "ta"}, Adoption{Listener: ln, IP: "127.0.0.1", Own: &own}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.AdoptQueue("b", QueueOptions{URLs: []string{base + "/api/"}, Token: "tb"}, Adoption{}); err != nil {
		t.Fatal(err)
	}
	own.KeepAliveTimeout = 1000
	h.SetOwnSettings("a", own)
	fa, _ := attachWorker(t, h, map[string]any{"queue": "a", "token": "ta"})
	fb, _ := attachWorker(t, h, map[string]any{"queue": "b", "token": "tb"})
	for _, c := range []struct {
		path string
		w    *fakeWorker
	}{{"/api/x", fb}, {"/x", fa}, {"/api/", fb}} {
		done := make(chan string)
		go func() {
			res, _, _ := exchange(t, port, "GET "+c.path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			done <- res
		}()
		id, r := c.w.nextRequest(true)
		if string(r.URL) != c.path {
			t.Fatalf("REQUEST %s, want %s", r.URL, c.path)
		}
		c.w.respond(id, 200, c.path)
		if res := <-done; !strings.HasSuffix(res, c.path) {
			t.Fatalf("client got %q", res)
		}
	}
}
