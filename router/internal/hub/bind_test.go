package hub

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"httpsys/router/internal/coded"
)

// A standalone server on Windows (bind.go): its port is bound while listen() waits,
// nothing is accepted until its queue is made, a port in use is refused at once, and
// a server closed before its queue was made frees its port.

func TestBindPortBindsNowAndBindQueueMakesTheQueueOnIt(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port, err := h.BindPort("~1.listen1", "127.0.0.1", 0)
	if err != nil || port == 0 {
		t.Fatalf("BindPort: %d %v", port, err)
	}
	// the port listens (the kernel completes the handshake) but nothing routes yet
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := h.BindQueue(bindQueueCmd{Name: "~1.listen1", IP: "127.0.0.1", URLs: []string{"http://127.0.0.1:" + strconv.Itoa(port) + "/"}, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Ports) != 1 || info.Ports[0] != port {
		t.Fatalf("ports %v, want [%d]", info.Ports, port)
	}
	if _, err := h.BindQueue(bindQueueCmd{Name: "~1.listen1", IP: "127.0.0.1"}); err == nil {
		t.Fatal("a second BindQueue for the same name succeeded")
	}
}

func TestBindPortOnAPortInUseIsPortInUse(t *testing.T) {
	h, _ := startHub(t, false, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = h.BindPort("~1.listen1", "127.0.0.1", port)
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != coded.PortInUse {
		t.Fatalf("BindPort on a port in use: %v, want %s", err, coded.PortInUse)
	}
}

func TestAServerClosedBeforeItsQueueWasMadeFreesItsPort(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port, err := h.BindPort("~1.listen1", "127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.UnbindQueue("~1.listen1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			ln.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the port is still bound: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := h.BindPort("~1.listen2", "127.0.0.1", port); err != nil {
		t.Fatalf("the port freed is not bound again: %v", err)
	}
}

func TestBindPathBindsNowAPathInUseIsPortInUseAndBindQueueServesIt(t *testing.T) {
	h, _ := startHub(t, false, nil)
	file := filepath.Join(t.TempDir(), "app.sock")
	if err := h.BindPath("~1.listen1", file, false); err != nil {
		t.Fatalf("BindPath: %v", err)
	}
	// node's listen(path) on a name in use: EADDRINUSE (ERR_HTTPSYS_PORT_IN_USE)
	err := h.BindPath("~1.listen2", file, false)
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != coded.PortInUse {
		t.Fatalf("BindPath on a path in use: %v, want %s", err, coded.PortInUse)
	}
	info, err := h.BindQueue(bindQueueCmd{Name: "~1.listen1", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Ports) != 0 {
		t.Fatalf("a listen(path)'s queue has ports %v", info.Ports)
	}
	// the app's close() removes the file, as node's does: never the router
	if err := h.UnbindQueue("~1.listen1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the router removed the socket file: %v", err)
	}
}
