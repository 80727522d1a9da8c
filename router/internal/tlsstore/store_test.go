package tlsstore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

type pair struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
	kpem string
}

// issue makes a certificate for cn signed by parent (nil: self-signed).
func issue(t *testing.T, cn string, parent *pair, ca bool, usage x509.ExtKeyUsage) *pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{cn}, IsCA: ca, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	signer, signKey := tmpl, key
	if parent != nil {
		signer, signKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return &pair{cert: c, key: key,
		pem:  string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		kpem: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))}
}

type fixture struct {
	ca, other, server, a, b, client, stranger *pair
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{}
	f.ca = issue(t, "test CA", nil, true, x509.ExtKeyUsageAny)
	f.other = issue(t, "other CA", nil, true, x509.ExtKeyUsageAny)
	f.server = issue(t, "localhost", nil, false, x509.ExtKeyUsageServerAuth)
	f.a = issue(t, "a.localhost", nil, false, x509.ExtKeyUsageServerAuth)
	f.b = issue(t, "b.localhost", nil, false, x509.ExtKeyUsageServerAuth)
	f.client = issue(t, "client", f.ca, false, x509.ExtKeyUsageClientAuth)
	f.stranger = issue(t, "stranger", nil, false, x509.ExtKeyUsageClientAuth)
	return f
}

func entry(port int, host string, p *pair) Entry {
	return Entry{Port: port, Host: host, Cert: p.pem, Key: p.kpem, Label: host}
}

func verifying(e Entry, ca *pair, reject bool) Entry {
	e.CA, e.RequestCert, e.RejectUnauthorized = ca.pem, true, &reject
	return e
}

func state(name string, resumed bool, peer ...*pair) *tls.ConnectionState {
	cs := &tls.ConnectionState{ServerName: name, DidResume: resumed}
	for _, p := range peer {
		cs.PeerCertificates = append(cs.PeerCertificates, p.cert)
	}
	return cs
}

func TestSlotOrder(t *testing.T) {
	f := newFixture(t)
	s := New(nil, nil)
	wild := entry(1, "*.example.test", f.b)
	if err := s.SetConfig([]Entry{entry(1, "", f.server), entry(1, "a.localhost", f.a), wild}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetApp("app", []Where{{Port: 1, Host: "app.localhost"}, {Port: 2}}, entry(0, "", f.b)); err != nil {
		t.Fatal(err)
	}
	cn := func(port int, name string) string {
		cfg, err := s.configFor(port, name)
		if err != nil {
			return ""
		}
		c, _ := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
		return c.Subject.CommonName
	}
	for _, c := range []struct {
		port int
		name string
		want string
	}{
		{1, "A.LocalHost", "a.localhost"},    // exact, any case
		{1, "x.example.test", "b.localhost"}, // the wildcard
		{1, "", "localhost"},                 // no SNI: the port's
		{1, "app.localhost", "localhost"},    // the config's port entry wins over an app's host
		{2, "anything", "b.localhost"},       // the app's, where the config has none
		{3, "", ""},                          // none: the handshake fails
	} {
		if got := cn(c.port, c.name); got != c.want {
			t.Errorf("port %d name %q: %q, want %q", c.port, c.name, got, c.want)
		}
	}
	if !s.ConfigServes(1, "") || s.ConfigServes(2, "") || !s.Has(2, "x") || s.Has(3, "") {
		t.Error("ConfigServes/Has disagree with the order")
	}
	s.RemoveApp("app")
	if s.Has(2, "") {
		t.Error("a removed app's certificate still serves")
	}
}

func TestVerdict(t *testing.T) {
	f := newFixture(t)
	s := New(nil, nil)
	err := s.SetConfig([]Entry{
		entry(1, "", f.server),
		entry(1, "a.localhost", f.a),
		verifying(entry(1, "b.localhost", f.b), f.ca, true),
		verifying(entry(1, "c.localhost", f.b), f.other, false),
		verifying(entry(2, "", f.server), f.ca, false),
	})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		authorized bool
		err        string
		refuse     bool
	}
	check := func(what string, v Verdict, w want) {
		t.Helper()
		if v.Authorized != w.authorized || v.AuthorizationError != w.err || v.Refuse != w.refuse {
			t.Errorf("%s: got %+v, want %+v", what, v, w)
		}
	}
	// an entry that asks nothing: nothing to say, whatever the client sent
	check("no request", s.Judge(1, state("a.localhost", false, f.stranger)), want{})
	// a full handshake: verified against the entry's CA, in node's words
	check("no certificate", s.Judge(1, state("b.localhost", false)), want{false, "UNABLE_TO_GET_ISSUER_CERT", true})
	check("self-signed", s.Judge(1, state("b.localhost", false, f.stranger)), want{false, "DEPTH_ZERO_SELF_SIGNED_CERT", true})
	check("another CA's", s.Judge(1, state("c.localhost", false, f.client)), want{false, "UNABLE_TO_VERIFY_LEAF_SIGNATURE", false})
	// resumed before this router verified it for the entry: not verified
	check("resumed, never verified", s.Judge(1, state("b.localhost", true, f.client)), want{false, "SESSION_NOT_VERIFIED", true})
	check("verified", s.Judge(1, state("b.localhost", false, f.client)), want{authorized: true})
	check("resumed after", s.Judge(1, state("b.localhost", true, f.client)), want{authorized: true})
	// the record is for that entry's CA on that port: another entry, another port are not
	check("resumed, other entry", s.Judge(1, state("c.localhost", true, f.client)), want{false, "SESSION_NOT_VERIFIED", false})
	check("resumed, other port", s.Judge(2, state("", true, f.client)), want{false, "SESSION_NOT_VERIFIED", false})
	// a resumed session without a certificate where one is required
	check("resumed, none", s.Judge(1, state("b.localhost", true)), want{false, "NO_CERTIFICATE", true})
	// a reload keeps the entry's identity: the record still counts for the same CA ...
	e := verifying(entry(1, "b.localhost", f.a), f.ca, true)
	if err := s.SetConfig([]Entry{entry(1, "", f.server), e}); err != nil {
		t.Fatal(err)
	}
	check("resumed across a certificate swap", s.Judge(1, state("b.localhost", true, f.client)), want{authorized: true})
	// ... and not for another CA
	e = verifying(entry(1, "b.localhost", f.a), f.other, true)
	if err := s.SetConfig([]Entry{entry(1, "", f.server), e}); err != nil {
		t.Fatal(err)
	}
	check("resumed, the entry's CA changed", s.Judge(1, state("b.localhost", true, f.client)), want{false, "SESSION_NOT_VERIFIED", true})
}

func TestVerifiedRecordsExpire(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	s := New(nil, func() time.Time { return now })
	if err := s.SetConfig([]Entry{verifying(entry(1, "", f.server), f.ca, true)}); err != nil {
		t.Fatal(err)
	}
	if v := s.Judge(1, state("", false, f.client)); !v.Authorized {
		t.Fatalf("not verified: %+v", v)
	}
	now = now.Add(SessionTimeout + time.Second)
	if v := s.Judge(1, state("", true, f.client)); v.Authorized {
		t.Error("a record outlived the session lifetime")
	}
}

func TestMisdirected(t *testing.T) {
	f := newFixture(t)
	s := New(nil, nil)
	if err := s.SetConfig([]Entry{entry(1, "", f.server), entry(1, "a.localhost", f.a), verifying(entry(1, "b.localhost", f.b), f.ca, true)}); err != nil {
		t.Fatal(err)
	}
	a := s.Judge(1, state("a.localhost", false)).Slot
	port := s.Judge(1, state("", false)).Slot
	for _, c := range []struct {
		slot *Slot
		host string
		want bool
	}{
		{a, "a.localhost", false},
		{a, "b.localhost", true},
		{a, "", false},         // HTTP/1.0 without a Host
		{port, "other", false}, // the port's entry serves other names too
		{port, "a.localhost", true},
	} {
		if got := s.Misdirected(1, c.slot, c.host); got != c.want {
			t.Errorf("%q: %v, want %v", c.host, got, c.want)
		}
	}
}

func TestLRUBound(t *testing.T) {
	now := time.Now()
	l := newLRU(3, time.Minute, func() time.Time { return now })
	for _, k := range []string{"a", "b", "c"} {
		l.set(k, k)
	}
	l.get("a") // a is now the most recent: b goes first
	l.set("d", "d")
	if _, ok := l.get("b"); ok {
		t.Error("the least recently used record was kept")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := l.get(k); !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	if l.len() != 3 {
		t.Errorf("len %d, want 3", l.len())
	}
	now = now.Add(2 * time.Minute)
	if _, ok := l.get("a"); ok {
		t.Error("an expired record was returned")
	}
}

// handshake runs a real handshake with the store's config for port over a pipe.
func handshake(t *testing.T, s *Store, port int, cache tls.ClientSessionCache) bool {
	t.Helper()
	cn, sn := net.Pipe()
	defer cn.Close()
	defer sn.Close()
	srv := tls.Server(sn, s.ServerConfig(port))
	done := make(chan error, 1)
	go func() {
		err := srv.Handshake()
		if err == nil {
			// TLS 1.3 tickets follow the handshake: let the client read them
			_, err = srv.Write([]byte("x"))
		}
		done <- err
	}()
	cli := tls.Client(cn, &tls.Config{InsecureSkipVerify: true, ServerName: "localhost", ClientSessionCache: cache}) //nolint:gosec // test certificates
	if err := cli.Handshake(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := cli.Read(b); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return cli.ConnectionState().DidResume
}

func TestTicketsArePerPort(t *testing.T) {
	f := newFixture(t)
	s := New(nil, nil)
	if err := s.SetConfig([]Entry{entry(1, "", f.server), entry(2, "", f.server)}); err != nil {
		t.Fatal(err)
	}
	cache := tls.NewLRUClientSessionCache(4)
	if handshake(t, s, 1, cache) {
		t.Fatal("resumed on the first handshake")
	}
	// the same certificate, the same cache: another port's keys do not open the ticket
	if handshake(t, s, 2, cache) {
		t.Error("a session of port 1 resumed on port 2")
	}
	if !handshake(t, s, 2, cache) {
		t.Error("port 2 did not resume its own session")
	}
	// and a certificate swap keeps the port's sessions
	if err := s.SetConfig([]Entry{entry(1, "", f.a), entry(2, "", f.server)}); err != nil {
		t.Fatal(err)
	}
	if !handshake(t, s, 2, cache) {
		t.Error("a port's session did not survive a reload")
	}
}

func TestSessionsLiveNodesLifetime(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	s := New(nil, func() time.Time { return now })
	if err := s.SetConfig([]Entry{entry(1, "", f.server)}); err != nil {
		t.Fatal(err)
	}
	cache := tls.NewLRUClientSessionCache(4)
	handshake(t, s, 1, cache)
	now = now.Add(SessionTimeout - time.Second)
	if !handshake(t, s, 1, cache) {
		t.Fatal("a session did not resume within its lifetime")
	}
	// the resumption issued a new ticket: it lives from then
	now = now.Add(SessionTimeout + time.Second)
	if handshake(t, s, 1, cache) {
		t.Error("a session resumed past node's lifetime")
	}
}
