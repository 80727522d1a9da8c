package hub

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"httpsys/router/internal/tlsstore"
	"httpsys/router/internal/wire"
)

// selfSigned is a PEM certificate and key for cn.
func selfSigned(t *testing.T, cn string) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
}

// TLS end to end, many clients at once (under -race in npm run test:router): the
// session on the wire, the 421 for another entry's Host, the counts.
func TestTLSConnectionsCarryTheirSessionAndKeepToTheirEntry(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := freeTCPPort(t)
	cert, key := selfSigned(t, "localhost")
	acert, akey := selfSigned(t, "a.localhost")
	if err := h.SetTLS([]tlsstore.Entry{
		{Port: port, Cert: cert, Key: key, Label: "port"},
		{Port: port, Host: "a.localhost", Cert: acert, Key: akey, Label: "a"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateQueue("app", QueueOptions{URLs: []string{"https://+:" + strconv.Itoa(port) + "/"}, Token: "s"}); err != nil {
		t.Fatal(err)
	}
	fw, first := attachWorker(t, h, map[string]any{"queue": "app", "token": "s"})
	if first.Type != wire.TypeHelloOK {
		t.Fatalf("HELLO answered %v", first.Type)
	}
	go func() {
		for {
			f, ok := <-fw.frames
			if !ok {
				return
			}
			if f.Type != wire.TypeRequest {
				continue
			}
			r, err := f.Request()
			if err != nil || r.Flags&wire.ReqTLS == 0 {
				fw.respond(f.ID, 500, "no TLS section")
				continue
			}
			info, _, err := wire.DecodeTLSInfo(r.TLS)
			if err != nil {
				fw.respond(f.ID, 500, err.Error())
				continue
			}
			fw.respond(f.ID, 200, info.Protocol+" "+info.ServerName)
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := "a.localhost"
			if i%2 == 1 {
				name = ""
			}
			c, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{ServerName: name, InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}) //nolint:gosec // a test certificate
			if err != nil {
				errs <- err.Error()
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			for j := 0; j < 5; j++ {
				host := "a.localhost"
				if i%2 == 1 {
					host = "other"
				}
				_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n"))
				res := readResponse(t, c, br)
				want := "TLSv1.3 " + name
				if !strings.HasPrefix(res, "HTTP/1.1 200") || !strings.HasSuffix(res, want) {
					errs <- "got " + res + ", want " + want
					return
				}
			}
			if i%2 == 1 {
				// the port's entry, then a Host that has an entry of its own: 421, closed
				_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: a.localhost\r\n\r\n"))
				if res := readResponse(t, c, br); !strings.HasPrefix(res, "HTTP/1.1 421 Misdirected Request\r\n") || !strings.Contains(res, "Connection: close\r\n") {
					errs <- "misdirected: " + res
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if s := h.TLSStats(); s.Handshakes != 16 || s.Failures != 0 {
		t.Errorf("stats %+v, want 16 handshakes and no failure", s)
	}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
