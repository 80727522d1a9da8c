//go:build unix

package nodeipc

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// node's parent side as child.send(message, handle) writes it: one JSON line, the
// descriptor riding with it (SCM_RIGHTS), and then nothing more with a handle until
// NODE_HANDLE_ACK comes back.
func TestAHandleArrivesWithItsMessageAndIsAcknowledged(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	parentFile := os.NewFile(uintptr(fds[0]), "parent")
	pc, err := net.FileConn(parentFile)
	_ = parentFile.Close()
	if err != nil {
		t.Fatal(err)
	}
	parent := pc.(*net.UnixConn)
	defer parent.Close()
	ch, err := Open(os.NewFile(uintptr(fds[1]), "child"))
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	got := make(chan Message, 4)
	go func() { _ = ch.Serve(func(m Message) { got <- m }) }()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	line := `{"cmd":"NODE_HANDLE","type":"net.Server","msg":{"httpsys":"listen","seq":1}}` + "\n"
	if _, _, err := parent.WriteMsgUnix([]byte(line), syscall.UnixRights(int(lf.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	// a message without a handle, split across writes
	_, _ = parent.Write([]byte(`{"httpsys":`))
	_, _ = parent.Write([]byte(`"hello"}` + "\n"))

	ack, err := bufio.NewReader(parent).ReadString('\n')
	if err != nil || ack != `{"cmd":"NODE_HANDLE_ACK"}`+"\n" {
		t.Fatalf("ack %q %v", ack, err)
	}
	m := <-got
	var msg struct {
		Httpsys string `json:"httpsys"`
		Seq     int    `json:"seq"`
	}
	if err := json.Unmarshal(m.Msg, &msg); err != nil || msg.Httpsys != "listen" || msg.Seq != 1 {
		t.Fatalf("message %s %v", m.Msg, err)
	}
	if m.File == nil {
		t.Fatal("no descriptor came with the handle")
	}
	got2, err := net.FileListener(m.File)
	_ = m.File.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer got2.Close()
	if got2.Addr().String() != ln.Addr().String() {
		t.Fatalf("the descriptor is %v, want %v", got2.Addr(), ln.Addr())
	}
	select {
	case m := <-got:
		if string(m.Msg) != `{"httpsys":"hello"}` || m.File != nil {
			t.Fatalf("second message %s", m.Msg)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the message split across writes did not arrive")
	}
}
