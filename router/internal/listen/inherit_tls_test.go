package listen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strconv"
	"testing"
	"time"

	"httpsys/router/internal/logger"
)

func selfSignedConfig(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// A standalone https server's socket (issue 25): the adopted port is a TLS one, so its
// https prefix takes it, and a connection accepted there, or one node accepted before
// the hand-over (HandshakeAdopted), is handed on once its handshake is done.
func TestAnAdoptedTLSListenerHandshakesItsConnections(t *testing.T) {
	secure := make(chan int, 4)
	l := New(logger.Discard(), 0, func(c net.Conn, _ int, _ bool, done func()) {
		t.Error("a connection of a TLS port was served as plain")
		_ = c.Close()
		done()
	}, nil)
	cfg := selfSignedConfig(t)
	l.SetTLS(&TLS{
		Config:           func(int) *tls.Config { return cfg },
		HandshakeTimeout: 2 * time.Second,
		OnSecure: func(c *tls.Conn, port int, _ bool, done func()) {
			secure <- port
			_ = c.Close()
			done()
		},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port, serve, abandon, err := l.AdoptTLS(ln, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Acquire(port, "127.0.0.1", true, "https://127.0.0.1:"+strconv.Itoa(port)+"/"); err != nil {
		t.Fatal("the https prefix on the adopted port:", err)
	}
	abandon()
	serve()
	handshake := func(c net.Conn) {
		tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
		defer tc.Close()
		_ = tc.SetDeadline(time.Now().Add(2 * time.Second))
		if err := tc.Handshake(); err != nil {
			t.Error("handshake:", err)
		}
	}
	expect := func(what string) {
		t.Helper()
		select {
		case p := <-secure:
			if p != port {
				t.Fatalf("%s: handed on for port %d, want %d", what, p, port)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: not handed on", what)
		}
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	go handshake(c)
	expect("accepted on the port")

	// one node accepted on its copy: a listener of the test's stands for it
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	client, err := net.Dial("tcp", other.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := other.Accept()
	if err != nil {
		t.Fatal(err)
	}
	go handshake(client)
	if !l.HandshakeAdopted(server, port, func() {}) {
		t.Fatal("HandshakeAdopted does not know the TLS port")
	}
	expect("accepted before the hand-over")
	if l.HandshakeAdopted(server, port+1, func() {}) {
		t.Fatal("HandshakeAdopted took a port that is not a TLS one")
	}
	l.Release(port, "127.0.0.1")
}
