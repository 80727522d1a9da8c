package listen

import (
	"net"
	"strconv"
	"testing"
	"time"

	"httpsys/router/internal/logger"
)

// A standalone app's listening socket, bound by node and handed over (issue 25
// "Standalone"): its prefix's Acquire finds it listening and binds nothing, nothing is
// accepted before serve, and the last Release closes it (node's close() frees the port).
func TestAnAdoptedListenerServesItsPrefixAndGoesWithIt(t *testing.T) {
	accepted := make(chan int, 4)
	closed := make(chan int, 4)
	l := New(logger.Discard(), 0, func(c net.Conn, port int, _ bool, done func()) {
		accepted <- port
		_ = c.Close()
		done()
	}, func(port int) { closed <- port })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port, serve, abandon, err := l.Adopt(ln, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if port != ln.Addr().(*net.TCPAddr).Port {
		t.Fatalf("port %d, the listener's is %v", port, ln.Addr())
	}
	if err := l.Acquire(port, "127.0.0.1", false, "http://127.0.0.1:"+strconv.Itoa(port)+"/"); err != nil {
		t.Fatal("the prefix on the adopted port:", err)
	}
	abandon() // used: kept
	// the kernel queues a client before serve; it is accepted once serve runs
	c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-accepted:
		t.Fatal("accepted before serve")
	case <-time.After(50 * time.Millisecond):
	}
	serve()
	select {
	case p := <-accepted:
		if p != port {
			t.Fatalf("accepted on port %d, want %d", p, port)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("not accepted after serve")
	}
	l.Release(port, "127.0.0.1")
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("the port did not close with its last prefix")
	}
	if err := dial(port, "127.0.0.1"); err == nil {
		t.Fatal("the adopted listener still accepts after its last prefix left")
	}
}

func TestAnAdoptedListenerNoPrefixTookIsClosedByAbandon(t *testing.T) {
	l := New(logger.Discard(), 0, func(c net.Conn, _ int, _ bool, done func()) { _ = c.Close(); done() }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port, _, abandon, err := l.Adopt(ln, "")
	if err != nil {
		t.Fatal(err)
	}
	abandon()
	if err := dial(port, "127.0.0.1"); err == nil {
		t.Fatal("still listening after abandon")
	}
	if len(l.Ports()) != 0 {
		t.Fatalf("ports left: %v", l.Ports())
	}
}
