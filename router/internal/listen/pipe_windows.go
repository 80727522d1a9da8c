//go:build windows

package listen

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// pipePrefix starts every local named pipe's path (src/local-socket.js socketPath).
const pipePrefix = `\\.\pipe\`

// pipeBuffer is each instance's buffer size each way, libuv's (uv_pipe_bind), so a
// worker's writes block where they block on a pipe node listens on.
const pipeBuffer = 65536

// Private listens where the supervisor's workers attach on Windows: the named pipe
// `\\.\pipe\httpsys-<user>-<pid>` (src/local-socket.js), as node's net.Server makes
// one. A connected instance's reads and writes are go-winio's (overlapped I/O on its
// completion port, deadlines, cancellation on close: docs/architecture.md 11); making
// and connecting instances is here, as libuv does it, for two reasons:
//
//   - go-winio's listener keeps a first instance opened without read or write access
//     so that Windows holds it disconnected. Wine (the test suite's Windows,
//     docs/wine.md 2.12) puts every new instance in the listening state at once, so a
//     worker connected to that dead instance and was never accepted. Here every
//     instance is a real one.
//   - The first instance is made with FILE_FLAG_FIRST_PIPE_INSTANCE, so listening fails
//     when another process holds the name already (a squatter would otherwise share
//     it and take workers' connections).
//
// Tighter than node's pipe, whose default security descriptor lets Everyone read
// (CreateNamedPipe's documentation): the router's user owns the pipe and is the only
// entry of its protected DACL (GENERIC_ALL), so another user can neither attach to a
// queue and receive its requests nor open the pipe at all, nor create an instance of
// its own under the name while the router runs (FILE_CREATE_PIPE_INSTANCE is in that
// DACL too). Remote clients are refused (SMB reaches pipes).
//
// A path that is not a pipe's is an AF_UNIX socket file, which takes its directory's
// ACL (the runtime directory is the user's own: docs/supervisor.md 4.5).
func Private(path string) (net.Listener, error) {
	if !isPipe(path) {
		return net.Listen("unix", path)
	}
	sddl, err := ownerOnly()
	if err != nil {
		return nil, err
	}
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return nil, fmt.Errorf("security descriptor %s: %w", sddl, err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(windows.SecurityAttributes{}))
	return listenPipe(path, sa)
}

// appPipe listens on a standalone app's listen(`\\.\pipe\...`) (bindpath_windows.go)
// as libuv's uv_pipe_bind makes that pipe: the first instance, so a name in use fails,
// and no security attributes, so CreateNamedPipe's default DACL, node's (remote
// clients are still refused here, as Private's).
func appPipe(path string) (net.Listener, error) {
	return listenPipe(path, nil)
}

func listenPipe(path string, sa *windows.SecurityAttributes) (net.Listener, error) {
	var err error
	l := &pipeListener{path: path, sa: sa, ov: new(windows.Overlapped)}
	if l.next, err = l.instance(true); err != nil {
		return nil, &net.OpError{Op: "listen", Net: "pipe", Addr: pipeAddr(path), Err: err}
	}
	if l.ov.HEvent, err = windows.CreateEvent(nil, 1, 0, nil); err != nil {
		_ = windows.CloseHandle(l.next)
		return nil, err
	}
	if l.closeEv, err = windows.CreateEvent(nil, 1, 0, nil); err != nil {
		_ = windows.CloseHandle(l.next)
		_ = windows.CloseHandle(l.ov.HEvent)
		return nil, err
	}
	return l, nil
}

// isPipe says whether path names a local named pipe.
func isPipe(path string) bool {
	return len(path) > len(pipePrefix) && strings.EqualFold(path[:len(pipePrefix)], pipePrefix)
}

// ownerOnly is the SDDL of a descriptor owned by the process's user whose protected
// DACL (no inherited entries) allows that user everything and nobody anything else.
func ownerOnly() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("the process's user: %w", err)
	}
	sid := tu.User.Sid.String()
	return "O:" + sid + "D:P(A;;GA;;;" + sid + ")", nil
}

type pipeListener struct {
	path    string
	sa      *windows.SecurityAttributes
	closeEv windows.Handle // set by Close: ends a wait for a client

	closeOnce sync.Once
	// mu is held by Accept while it waits (one accept at a time, as libuv accepts),
	// and by Close once that wait has ended
	mu     sync.Mutex
	closed bool
	next   windows.Handle // the instance waiting for a client; 0 when making it failed
	// ov is the pending ConnectNamedPipe's, on the heap: the kernel writes it until the
	// connect completes or is cancelled, and a goroutine's stack may move
	ov *windows.Overlapped
}

// instance makes one instance of the pipe, unconnected, in byte mode.
func (l *pipeListener) instance(first bool) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(l.path)
	if err != nil {
		return 0, err
	}
	open := uint32(windows.PIPE_ACCESS_DUPLEX | windows.FILE_FLAG_OVERLAPPED)
	if first {
		open |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	mode := uint32(windows.PIPE_TYPE_BYTE | windows.PIPE_READMODE_BYTE | windows.PIPE_WAIT | windows.PIPE_REJECT_REMOTE_CLIENTS)
	return windows.CreateNamedPipe(name, open, mode, windows.PIPE_UNLIMITED_INSTANCES, pipeBuffer, pipeBuffer, 0, l.sa)
}

// Accept waits for a worker to open the pipe. The next instance is made before the
// connected one is handed over, so a worker finds one listening (one that finds none
// waits and retries: libuv's uv_pipe_connect on ERROR_PIPE_BUSY).
func (l *pipeListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.closed {
			return nil, net.ErrClosed
		}
		if l.next == 0 {
			h, err := l.instance(false)
			if err != nil {
				return nil, &net.OpError{Op: "accept", Net: "pipe", Addr: pipeAddr(l.path), Err: err}
			}
			l.next = h
		}
		err := l.connect(l.next)
		if l.closed {
			return nil, net.ErrClosed
		}
		h := l.next
		l.next = 0
		if err != nil {
			// ERROR_NO_DATA: the client came and went before we looked; any other
			// failure also ends this instance only
			_ = windows.CloseHandle(h)
			if errors.Is(err, windows.ERROR_NO_DATA) {
				continue
			}
			return nil, &net.OpError{Op: "accept", Net: "pipe", Addr: pipeAddr(l.path), Err: err}
		}
		if nh, err := l.instance(false); err == nil {
			l.next = nh
		}
		f, err := winio.MakeOpenFile(syscall.Handle(h))
		if err != nil {
			_ = windows.CloseHandle(h)
			return nil, &net.OpError{Op: "accept", Net: "pipe", Addr: pipeAddr(l.path), Err: err}
		}
		return &pipeConn{ReadWriteCloser: f, d: f.(deadliner), path: l.path}, nil
	}
}

// connect waits for a client on instance h, or for Close (then the caller sees closed).
func (l *pipeListener) connect(h windows.Handle) error {
	ov := l.ov
	if err := windows.ResetEvent(ov.HEvent); err != nil {
		return err
	}
	ov.Internal, ov.InternalHigh, ov.Offset, ov.OffsetHigh = 0, 0, 0, 0
	err := windows.ConnectNamedPipe(h, ov)
	switch {
	case err == nil, errors.Is(err, windows.ERROR_PIPE_CONNECTED):
		return nil
	case !errors.Is(err, windows.ERROR_IO_PENDING):
		return err
	}
	r, err := windows.WaitForMultipleObjects([]windows.Handle{ov.HEvent, l.closeEv}, false, windows.INFINITE)
	if err != nil || r != windows.WAIT_OBJECT_0 {
		// closing (or the wait itself failed): the connect is cancelled and waited
		// for, so the kernel is done with ov before anyone reuses or frees it
		_ = windows.CancelIoEx(h, ov)
		var n uint32
		_ = windows.GetOverlappedResult(h, ov, &n, true)
		if err == nil {
			l.closed = true
		}
		return err
	}
	var n uint32
	return windows.GetOverlappedResult(h, ov, &n, false)
}

// Close stops listening: a waiting Accept returns net.ErrClosed, the instance waiting
// for a client goes, and with the last handle the name is free again. Workers
// connected stay connected.
func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() {
		_ = windows.SetEvent(l.closeEv)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.closed = true
		if l.next != 0 {
			_ = windows.CloseHandle(l.next)
			l.next = 0
		}
		_ = windows.CloseHandle(l.ov.HEvent)
		_ = windows.CloseHandle(l.closeEv)
	})
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.path) }

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }

type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// pipeConn is a connected instance as a net.Conn (go-winio's file does the I/O).
type pipeConn struct {
	io.ReadWriteCloser
	d    deadliner
	path string
}

func (c *pipeConn) LocalAddr() net.Addr                { return pipeAddr(c.path) }
func (c *pipeConn) RemoteAddr() net.Addr               { return pipeAddr(c.path) }
func (c *pipeConn) SetReadDeadline(t time.Time) error  { return c.d.SetReadDeadline(t) }
func (c *pipeConn) SetWriteDeadline(t time.Time) error { return c.d.SetWriteDeadline(t) }
func (c *pipeConn) SetDeadline(t time.Time) error {
	if err := c.d.SetReadDeadline(t); err != nil {
		return err
	}
	return c.d.SetWriteDeadline(t)
}
