package listen

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/logger"
)

func dial(port int, host string) error {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
	if err == nil {
		_ = c.Close()
	}
	return err
}

func TestAPortListensWhileAPrefixUsesItAndTheLastOneClosesIt(t *testing.T) {
	var accepted atomic.Int64
	closed := make(chan int, 4)
	l := New(logger.Discard(), 0, func(c net.Conn, _ int, _ bool, done func()) {
		accepted.Add(1)
		_ = c.Close()
		done()
	}, func(port int) { closed <- port })
	port, err := l.AcquireFree("127.0.0.1", false)
	if err != nil {
		t.Fatal(err)
	}
	// an IP-bound use listens on that address only; a wildcard one takes it over
	if err := l.Acquire(port, "", false, ""); err != nil {
		t.Fatal(err)
	}
	if err := dial(port, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	l.Release(port, "")
	if err := dial(port, "127.0.0.1"); err != nil {
		t.Fatalf("the IP-bound use still listens: %v", err)
	}
	l.Release(port, "127.0.0.1")
	if got := <-closed; got != port {
		t.Fatalf("closed %d, want %d", got, port)
	}
	if err := dial(port, "127.0.0.1"); err == nil {
		t.Fatal("the port still listens after its last use left")
	}
}

func TestAPortAnotherProgramHoldsIsPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	l := New(logger.Discard(), 0, func(c net.Conn, _ int, _ bool, done func()) { done() }, nil)
	err = l.Acquire(port, "127.0.0.1", false, "")
	ce, ok := err.(*coded.Error)
	if !ok || ce.Code != coded.PortInUse || ce.Details["port"] != port {
		t.Fatalf("got %v, want PORT_IN_USE for port %d", err, port)
	}
	if len(l.Ports()) != 0 {
		t.Fatalf("a failed bind left ports %v", l.Ports())
	}
}
