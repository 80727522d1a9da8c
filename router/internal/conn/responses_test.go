package conn

import (
	"encoding/binary"
	"strings"
	"testing"
)

// payload builds a RESPONSE payload as a worker sends it.
func payload(status int, reason, block, body string) []byte {
	p := binary.LittleEndian.AppendUint16(nil, uint16(status))
	p = append(p, 0, 0, 0, 0, 0, 0)
	p = binary.LittleEndian.AppendUint16(p, uint16(len(reason)))
	p = append(p, reason...)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(block)))
	p = append(p, block...)
	return append(p, body...)
}

func TestAWorkersHeadGoesOutAsWrittenWithTheRoutersConnectionHeader(t *testing.T) {
	block := "Content-Length: 2\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-A: 1\r\n"
	p := payload(200, "OK", block, "hi")
	bodyStart := len(p) - 2
	cases := []struct {
		add  int
		want string
	}{
		{addNone, "HTTP/1.1 200 OK\r\n" + block + "\r\n"},
		{addClose, "HTTP/1.1 200 OK\r\n" + block + "Connection: close\r\n\r\n"},
		{addKeepAlive, "HTTP/1.1 200 OK\r\n" + block + "Connection: keep-alive\r\n\r\n"},
		// the router closes anyway: the worker's keep-alive lines go
		{addReplaceClose, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: 1\r\nConnection: close\r\n\r\n"},
	}
	for _, c := range cases {
		if got := string(appendFromFrame(nil, p, bodyStart, c.add)); got != c.want {
			t.Errorf("add %d:\n got %q\nwant %q", c.add, got, c.want)
		}
	}
	if got := string(appendFromFrame(nil, payload(404, "", "", ""), 14, addNone)); got != "HTTP/1.1 404 \r\n\r\n" {
		t.Errorf("an empty reason: %q", got)
	}
}

func TestTheRoutersOwnPagesAreWordedAsTheHubs(t *testing.T) {
	date := []byte("Sat, 28 Nov 2026 05:00:00 GMT")
	got := string(appendLocal(nil, 503, queueFull, false, addClose, date, ""))
	for _, want := range []string{
		"HTTP/1.1 503 Service Unavailable\r\n",
		"Content-Type: text/html; charset=us-ascii\r\nServer: httpsys\r\nDate: Sat, 28 Nov 2026 05:00:00 GMT\r\n",
		"Retry-After: 1\r\nConnection: close\r\n\r\n<!DOCTYPE html>",
		"<title>Service Unavailable</title>",
		"HTTP Error 503. The request queue is full; try again shortly.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("503 page lacks %q:\n%s", want, got)
		}
	}
	head := string(appendLocal(nil, 400, invalidHostname, true, addNone, date, ""))
	if !strings.HasPrefix(head, "HTTP/1.1 400 Bad Request\r\n") || !strings.HasSuffix(head, "\r\n\r\n") {
		t.Errorf("a HEAD's 400: %q", head)
	}
	_, body := page(400, invalidHostname)
	if !strings.Contains(head, "Content-Length: "+itoa(len(body))+"\r\n") || !strings.Contains(body, "Bad Request - Invalid Hostname") {
		t.Errorf("a HEAD keeps the page's length: %q", head)
	}
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
