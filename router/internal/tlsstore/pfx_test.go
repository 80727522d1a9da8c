package tlsstore

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"testing"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

func pfxOf(t *testing.T, enc *pkcs12.Encoder, p *pair, chain []*x509.Certificate, pass string) []byte {
	t.Helper()
	der, err := enc.Encode(p.key, p.cert, chain, pass)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func reasonOf(err error) string {
	var me *MaterialError
	if errors.As(err, &me) {
		return me.Reason
	}
	if err == nil {
		return ""
	}
	return "not a MaterialError: " + err.Error()
}

// The forms `openssl pkcs12 -export` writes: OpenSSL 3's default (PBES2, AES-256-CBC,
// PBKDF2) and the legacy ones node's default OpenSSL reads (3DES), with
// src/tls-material.js's words for what node refuses.
func TestPFXForms(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name   string
		enc    *pkcs12.Encoder
		pass   string
		open   string
		reason string
	}{
		{"modern (AES-256-CBC, PBKDF2)", pkcs12.Modern2023, "secret", "secret", ""},
		{"legacy 3DES", pkcs12.LegacyDES, "secret", "secret", ""},
		{"no passphrase", pkcs12.Modern2023, "", "", ""},
		{"wrong passphrase", pkcs12.Modern2023, "secret", "wrong", reasonPassphrase},
		{"missing passphrase", pkcs12.LegacyDES, "secret", "", reasonPassphrase},
		{"RC2 (openssl -legacy): node's OpenSSL 3 does not load it", pkcs12.LegacyRC2, "secret", "secret", reasonUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			cert, chain, err := loadPFX(pfxOf(t, c.enc, f.client, []*x509.Certificate{f.ca.cert}, c.pass), c.open)
			if got := reasonOf(err); got != c.reason {
				t.Fatalf("reason %q, want %q", got, c.reason)
			}
			if c.reason != "" {
				return
			}
			if cert.Leaf.Subject.CommonName != "client" || len(cert.Certificate) != 2 || len(chain) != 1 || chain[0].Subject.CommonName != "test CA" {
				t.Fatalf("leaf %q, %d certificates, chain %v", cert.Leaf.Subject.CommonName, len(cert.Certificate), chain)
			}
		})
	}
}

func TestPFXBadFiles(t *testing.T) {
	f := newFixture(t)
	// a trust store: certificates only
	noKey, err := pkcs12.Modern2023.EncodeTrustStore([]*x509.Certificate{f.server.cert}, "secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadPFX(noKey, "secret"); reasonOf(err) != reasonPFXNoKey {
		t.Errorf("no key: %q", reasonOf(err))
	}
	garbage := append([]byte{0x30, 0x82, 0x7f, 0xff}, make([]byte, 300)...) // a SEQUENCE whose length runs off the end
	if _, _, err := loadPFX(garbage, "secret"); err == nil || reasonOf(err)[:24] != "it is not a .pfx (PKCS#1" {
		t.Errorf("garbage: %q", reasonOf(err))
	}
	if _, _, err := loadPFX([]byte(f.server.pem), "secret"); err == nil {
		t.Error("a PEM file read as a pfx")
	}
}

// Windows and some tools write the chain before the leaf: the leaf is the key's.
func TestPFXLeafIsTheKeys(t *testing.T) {
	f := newFixture(t)
	der := pfxOf(t, pkcs12.Modern2023, &pair{cert: f.ca.cert, key: f.client.key}, []*x509.Certificate{f.client.cert}, "p")
	cert, chain, err := loadPFX(der, "p")
	if err != nil {
		t.Fatal(err)
	}
	if cert.Leaf.Subject.CommonName != "client" || len(chain) != 1 || chain[0].Subject.CommonName != "test CA" {
		t.Fatalf("leaf %q chain %v", cert.Leaf.Subject.CommonName, chain)
	}
}

func helloTLS(t *testing.T, m map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An app's pfx in node's forms (a Buffer, { buf, passphrase }, a list), served by SNI
// as its PEM pair would be; the wrong passphrase in src/tls-material.js's words.
func TestAppMaterialPFX(t *testing.T) {
	f := newFixture(t)
	der := pfxOf(t, pkcs12.Modern2023, f.server, nil, "secret")
	now := time.Now()
	for name, m := range map[string]map[string]any{
		"Buffer and passphrase": {"pfx": map[string]string{"base64": b64(der)}, "passphrase": "secret"},
		"{ buf, passphrase }":   {"pfx": []any{map[string]any{"buf": map[string]string{"base64": b64(der)}, "passphrase": "secret"}}, "passphrase": "other"},
	} {
		e, ok, err := AppMaterial(helloTLS(t, m), now)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", name, ok, err)
		}
		s := New(nil, nil)
		if err := s.SetApp("app", []Where{{Port: 1}}, e); err != nil {
			t.Fatal(err)
		}
		cfg, err := s.configFor(1, "localhost")
		if err != nil || cfg.Certificates[0].Leaf.Subject.CommonName != "localhost" {
			t.Fatalf("%s: %v", name, err)
		}
	}
	_, ok, err := AppMaterial(helloTLS(t, map[string]any{"pfx": map[string]string{"base64": b64(der)}, "passphrase": "wrong"}), now)
	if !ok || reasonOf(err) != reasonPassphrase {
		t.Errorf("wrong passphrase: %v %q", ok, reasonOf(err))
	}
	// the certificate checked for its dates is the pfx's
	if _, _, err := AppMaterial(helloTLS(t, map[string]any{"pfx": map[string]string{"base64": b64(der)}, "passphrase": "secret"}), now.Add(2*time.Hour)); err == nil {
		t.Error("an expired pfx certificate was taken")
	}
}

// A config entry's pfx as the supervisor sends it (setTls), its chain trusted for
// client certificates as node trusts it.
func TestConfigEntryPFX(t *testing.T) {
	f := newFixture(t)
	der := pfxOf(t, pkcs12.LegacyDES, f.server, []*x509.Certificate{f.ca.cert}, "secret")
	s := New(nil, nil)
	e := Entry{Port: 1, PFX: []string{b64(der)}, Passphrase: "secret", RequestCert: true, Label: "site.pfx"}
	if err := s.SetConfig([]Entry{e}); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.configFor(1, "")
	if err != nil || len(cfg.Certificates) != 1 || len(cfg.Certificates[0].Certificate) != 2 {
		t.Fatalf("%v %v", err, cfg)
	}
	if v := s.Judge(1, state("", false, f.client)); !v.Authorized {
		t.Errorf("a client certificate of the pfx's CA: %+v", v)
	}
	e.Passphrase = "wrong"
	var ee *EntryError
	if err := s.SetConfig([]Entry{e}); !errors.As(err, &ee) || reasonOf(ee.Err) != reasonPassphrase {
		t.Errorf("wrong passphrase: %v", err)
	}
}

// node's arrays: a chain per key, each key with the chain of its type; both served,
// Go picks the one the client supports.
func TestAppMaterialKeyArrays(t *testing.T) {
	f := newFixture(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &rsaKey.PublicKey, rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	rsaPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	rsaKeyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}))
	e, ok, err := AppMaterial(helloTLS(t, map[string]any{
		"cert": []string{f.server.pem, rsaPEM},
		"key":  []any{rsaKeyPEM, map[string]any{"pem": f.server.kpem}},
	}), time.Now())
	if err != nil || !ok || len(e.certs) != 2 {
		t.Fatalf("%v %v %d", ok, err, len(e.certs))
	}
	if _, isRSA := e.certs[0].PrivateKey.(*rsa.PrivateKey); !isRSA || e.certs[1].Leaf.Subject.CommonName != "localhost" {
		t.Errorf("pairs: %T %v", e.certs[0].PrivateKey, e.certs[1].Leaf.Subject)
	}
	// a key with another certificate of its type: src/tls-material.js's words
	_, _, err = AppMaterial(helloTLS(t, map[string]any{"cert": []string{f.a.pem}, "key": []string{f.b.kpem}}), time.Now())
	if reasonOf(err) != "the private key does not belong to the certificate" {
		t.Errorf("mismatch: %q", reasonOf(err))
	}
}
