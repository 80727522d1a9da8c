package tlsstore

import (
	"testing"
)

// An entry that asks for client certificates without a CA verifies them against node's
// default roots, as node's context does, and names none of them in its
// CertificateRequest; one with a CA verifies against that CA only, and names it.
func TestDefaultRootsVerifyAnEntryWithoutCA(t *testing.T) {
	f := newFixture(t)
	s := New(nil, nil)
	if err := s.SetDefaultCA(f.other.pem + "\n" + f.ca.pem); err != nil {
		t.Fatal(err)
	}
	noCA := entry(1, "", f.server)
	noCA.RequestCert = true
	if err := s.SetConfig([]Entry{noCA, verifying(entry(2, "", f.server), f.other, true)}); err != nil {
		t.Fatal(err)
	}
	if v := s.Judge(1, state("", false, f.client)); !v.Authorized || v.Refuse {
		t.Fatalf("a client the default roots issued: %+v", v)
	}
	if v := s.Judge(1, state("", false, f.stranger)); v.Authorized || v.AuthorizationError != "DEPTH_ZERO_SELF_SIGNED_CERT" {
		t.Fatalf("a self-signed client: %+v", v)
	}
	if v := s.Judge(2, state("", false, f.client)); v.Authorized {
		t.Fatalf("an entry's own CA replaces the default roots: %+v", v)
	}
	cfg, err := s.configFor(1, "")
	if err != nil || cfg.ClientCAs == nil || len(cfg.ClientCAs.Subjects()) != 0 { //nolint:staticcheck // the names a CertificateRequest carries
		t.Fatalf("the default roots are named in the CertificateRequest: %v", err)
	}
	cfg, err = s.configFor(2, "")
	if err != nil || len(cfg.ClientCAs.Subjects()) != 1 { //nolint:staticcheck // as above
		t.Fatalf("an entry's CA is not named: %v", err)
	}
	if err := s.SetDefaultCA("not PEM"); err == nil {
		t.Fatal("a default CA without a certificate was taken")
	}
}
