//go:build windows

package listen

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

func pipeName(t *testing.T) string {
	return fmt.Sprintf(`\\.\pipe\httpsys-listen-test-%d-%s`, os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
}

// A worker attaches over the pipe (node: net.connect(path)) and the router reads and
// writes it as any net.Conn: what one side writes the other reads, a close is an EOF.
func TestAWorkerPipeCarriesBytesBothWays(t *testing.T) {
	path := pipeName(t)
	l, err := Private(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err != nil {
			got <- "read: " + err.Error()
			return
		}
		_, _ = c.Write([]byte("OLLEH"))
		got <- string(buf)
	}()
	timeout := time.Second * 5
	c, err := winio.DialPipe(path, &timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("HELLO")); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, 5)
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "HELLO" || string(back) != "OLLEH" {
		t.Fatalf("server read %q, client read %q", s, back)
	}
	if n, err := c.Read(back); n != 0 || err == nil {
		t.Fatalf("after the router closed: %d bytes, %v", n, err)
	}
}

// Nobody takes over a name in use: a second listener on it fails, whoever asks (a
// squatter that came first makes the router's start fail the same way).
func TestASecondListenerOnTheSamePipeNameIsRefused(t *testing.T) {
	path := pipeName(t)
	l, err := Private(path)
	if err != nil {
		t.Fatal(err)
	}
	if l2, err := Private(path); err == nil {
		_ = l2.Close()
		if underWine() {
			// Wine 8 ignores FILE_FLAG_FIRST_PIPE_INSTANCE (docs/wine.md 2.12)
			t.Log("Wine: a second first instance was made")
		} else {
			t.Fatal("a second listener took the name")
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// the name is free again once the router let it go (no file is left behind)
	l3, err := Private(path)
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	_ = l3.Close()
}

// The pipe is the user's own: owner and the only entry of a protected DACL, with no
// access for Everyone (node's default pipe lets Everyone read).
func TestThePipeIsOpenToItsUserOnly(t *testing.T) {
	path := pipeName(t)
	l, err := Private(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	name, _ := windows.UTF16PtrFromString(path)
	h, err := windows.CreateFile(name, windows.READ_CONTROL, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("security descriptor: %s", sd)
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	me := tu.User.Sid
	owner, _, err := sd.Owner()
	if err != nil {
		t.Fatal(err)
	}
	if !owner.Equals(me) {
		t.Fatalf("owner %v, want %v", owner, me)
	}
	control, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	if control&windows.SE_DACL_PROTECTED == 0 {
		t.Fatalf("the DACL is not protected: %s", sd)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if dacl == nil || dacl.AceCount != 1 {
		t.Fatalf("want one ACE: %s", sd)
	}
	var ace *windows.ACCESS_ALLOWED_ACE
	if err := windows.GetAce(dacl, 0, &ace); err != nil {
		t.Fatal(err)
	}
	sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
	if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || !sid.Equals(me) {
		t.Fatalf("the ACE is not the user's allow: %s", sd)
	}
}

// underWine: ntdll exports wine_get_version under Wine only (docs/wine.md 1).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// Workers that attach together are all accepted, each on a pipe of its own: an instance
// is waiting for the next one while the last is handed over.
func TestWorkersAttachingTogetherAreAllAccepted(t *testing.T) {
	path := pipeName(t)
	l, err := Private(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 8
	got := make(chan string, n)
	go func() {
		for i := 0; i < n; i++ {
			c, err := l.Accept()
			if err != nil {
				got <- "accept: " + err.Error()
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 2)
				if _, err := io.ReadFull(c, buf); err != nil {
					got <- "read: " + err.Error()
					return
				}
				_, _ = c.Write(buf)
				got <- string(buf)
			}()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			timeout := 10 * time.Second
			c, err := winio.DialPipe(path, &timeout)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			msg := fmt.Sprintf("%02d", i)
			if _, err := c.Write([]byte(msg)); err != nil {
				errs <- err
				return
			}
			back := make([]byte, 2)
			if _, err := io.ReadFull(c, back); err != nil || string(back) != msg {
				errs <- fmt.Errorf("worker %s read %q, %v", msg, back, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		seen[<-got] = true
	}
	for i := 0; i < n; i++ {
		if !seen[fmt.Sprintf("%02d", i)] {
			t.Fatalf("the router did not read worker %d: %v", i, seen)
		}
	}
}

// Close ends an Accept that waits for a worker (the router closing: hub.Close), and the
// workers attached before keep their pipes.
func TestCloseEndsAWaitingAcceptAndKeepsAttachedWorkers(t *testing.T) {
	path := pipeName(t)
	l, err := Private(path)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	ended := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			ended <- err
			return
		}
		accepted <- c
		_, err = l.Accept()
		ended <- err
	}()
	timeout := 5 * time.Second
	worker, err := winio.DialPipe(path, &timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	var server net.Conn
	select {
	case server = <-accepted:
	case err := <-ended:
		t.Fatal(err)
	case <-time.After(5 * time.Second):
		t.Fatal("no accept")
	}
	defer server.Close()
	time.Sleep(50 * time.Millisecond) // the second Accept is waiting
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the waiting Accept")
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a later Accept: %v", err)
	}
	if _, err := worker.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "ok" {
		t.Fatalf("the attached worker's pipe after Close: %q, %v", buf, err)
	}
}

// A client's reset reaches the router as Winsock's WSAECONNRESET, wrapped as Go's
// net package wraps it (a read on a TCP connection: wsarecv), which Go's
// syscall.ECONNRESET does not match on Windows: IsConnReset does (a TLS handshake cut by
// a reset counts as ECONNRESET in tlsStats, as node names it). Built rather than provoked:
// Wine reports most resets as an EOF.
func TestAClientResetIsConnReset(t *testing.T) {
	err := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("wsarecv", windows.WSAECONNRESET)}
	if !IsConnReset(err) {
		t.Fatalf("%v is not a reset", err)
	}
	if IsConnReset(io.EOF) || IsConnReset(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("wsarecv", windows.WSAECONNABORTED)}) {
		t.Fatal("an EOF or an abort taken for a reset")
	}
}
