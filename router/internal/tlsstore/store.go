// Package tlsstore is which certificate the router serves on a TLS port, and its
// verdict on a client's certificate (as src/tls-store.js): a certificate per port and
// SNI host name (RFC 6066 3) from the config's `tls` entries (by host, exact then a
// *.wildcard, then the port's entry without a host), then from the apps' own key
// material (HELLO `tls`) for the hosts of their https prefixes, so an operator's
// certificate always wins over what an app ships.
//
// The supervisor reads, decrypts and checks the config's files (src/tls-material.js,
// whose messages an app's material gets here too) and sends PEM text, or a .pfx as it
// is (node cannot export a PKCS#12 file's key; go-pkcs12 opens it here, pfx.go); a
// reload sends them again.
// Entries are swapped, never mutated: a handshake already made keeps its certificate.
//
// Sessions (RFC 8446 2.2, RFC 5077) resume on the port that issued them, across a
// certificate swap, and never on another port: each port has its own ticket keys (Go
// has no session-id cache, so tickets are the only way to resume). Within a port a
// session resumes under any SNI name and carries the certificates of the handshake that
// made it, so the client-certificate verdict is the router's own, taken once the
// handshake is done (Judge): a resumed session is verified for an entry only if this
// router verified its certificate for that entry's CA in a full handshake.
package tlsstore

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SessionTimeout is node's default session lifetime, the life of a verification record.
const SessionTimeout = 300 * time.Second

// VerifiedMax bounds the verification records (tls-store.js VERIFIED_MAX).
const VerifiedMax = 100000

// Entry is a config `tls` entry as the supervisor sends it, checked already: PEM text,
// or a .pfx (PKCS#12) with its passphrase.
type Entry struct {
	Port               int      `json:"port"`
	Host               string   `json:"host"`
	Cert               string   `json:"cert"`
	Key                string   `json:"key"`
	PFX                []string `json:"pfx"`        // base64 DER, each; node opens them only with their passphrase
	Passphrase         string   `json:"passphrase"` // the pfx's
	CA                 string   `json:"ca"`
	RequestCert        bool     `json:"requestCert"`
	RejectUnauthorized *bool    `json:"rejectUnauthorized"` // default true, as node's
	Label              string   `json:"label"`

	// what AppMaterial made of an app's key material (node's several forms), checked
	certs  []tls.Certificate
	pfxCAs []*x509.Certificate
}

// Slot is one certificate and its client-certificate policy. Slots are replaced, never
// changed; key is the entry's identity, kept across a reload of its files.
type Slot struct {
	key                string
	policy             string            // the CA's digest when requestCert: what a verification is for
	certs              []tls.Certificate // one per key (node's arrays): Go serves the first the client supports
	ca                 *x509.CertPool    // what a client's certificate is verified against
	names              *x509.CertPool    // the CAs the CertificateRequest names (defaultca.go)
	requestCert        bool
	rejectUnauthorized bool
}

// RequestCert reports whether the slot asks clients for a certificate.
func (s *Slot) RequestCert() bool { return s.requestCert }

type configSlot struct {
	port int
	host string // lower case; "" for the port's
	slot *Slot
}

type claim struct {
	queue string
	slot  *Slot
}

// Where is one place an app's certificate serves: a port, and a host ("" for the port).
type Where struct {
	Port int
	Host string
}

// Store is one router's certificates, session keys and verification records.
type Store struct {
	now func() time.Time
	h2  func() bool

	mu       sync.Mutex
	config   []configSlot
	claims   map[string][]claim // "port host" -> claims, the first serves
	tickets  map[int][32]byte
	verified *lru
	configs  map[configKey]*tls.Config
	roots    []*x509.Certificate // node's default CAs (defaultca.go)
}

type configKey struct {
	slot *Slot
	port int
}

// New returns an empty store. h2 reports whether to offer h2 by ALPN (RFC 7301) before
// http/1.1 (nil: never); now is the clock (nil: time.Now).
func New(h2 func() bool, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	if h2 == nil {
		h2 = func() bool { return false }
	}
	return &Store{now: now, h2: h2, claims: map[string][]claim{}, tickets: map[int][32]byte{}, configs: map[configKey]*tls.Config{}}
}

// SetConfig replaces the config's entries; every one is parsed before any replaces
// what was there. It returns the ports whose certificates changed.
func (s *Store) SetConfig(entries []Entry) error {
	next := make([]configSlot, 0, len(entries))
	for i, e := range entries {
		host := strings.ToLower(e.Host)
		slot, err := makeSlot(e, "config "+strconv.Itoa(e.Port)+" "+host, s.defaultRoots())
		if err != nil {
			return &EntryError{Index: i, Entry: e, Err: err}
		}
		next = append(next, configSlot{port: e.Port, host: host, slot: slot})
	}
	s.mu.Lock()
	s.config = next
	clear(s.configs)
	s.mu.Unlock()
	return nil
}

// EntryError is an entry the store could not take (the supervisor checked it first, so
// this is a bug or a file that changed between its check and ours).
type EntryError struct {
	Index int
	Entry Entry
	Err   error
}

func (e *EntryError) Error() string {
	return "tls[" + strconv.Itoa(e.Index) + "] (" + e.Entry.Label + "): " + e.Err.Error()
}

func (e *EntryError) Unwrap() error { return e.Err }

// SetApp makes an app's certificate serve its https prefixes where no config entry
// does. The first queue to claim a host:port serves it; a later claim waits behind it.
func (s *Store) SetApp(queue string, where []Where, e Entry) error {
	slot, err := makeSlot(e, "app "+queue, s.defaultRoots())
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeAppLocked(queue)
	for _, w := range where {
		k := claimKey(w.Port, strings.ToLower(w.Host))
		s.claims[k] = append(s.claims[k], claim{queue: queue, slot: slot})
	}
	clear(s.configs)
	return nil
}

// RemoveApp forgets an app's certificates (its queue was deleted).
func (s *Store) RemoveApp(queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeAppLocked(queue)
	clear(s.configs)
}

func (s *Store) removeAppLocked(queue string) {
	for k, list := range s.claims {
		out := list[:0]
		for _, c := range list {
			if c.queue != queue {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			delete(s.claims, k)
		} else {
			s.claims[k] = out
		}
	}
}

// ConfigServes reports whether the config's entries serve every handshake for host
// ("" for any) on port, so that no app's certificate would ever be chosen there.
func (s *Store) ConfigServes(port int, host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.configSlotFor(port, strings.ToLower(host)) != nil
}

// Has reports whether a handshake for host ("" for none) on port has a certificate.
func (s *Store) Has(port int, host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slotFor(port, strings.ToLower(host)) != nil
}

// slotFor: config by host (exact, then *.wildcard), config for the port, app by host,
// app for the port. Under the lock; name is lower case.
func (s *Store) slotFor(port int, name string) *Slot {
	if slot := s.configSlotFor(port, name); slot != nil {
		return slot
	}
	if name != "" {
		if list := s.claims[claimKey(port, name)]; len(list) > 0 {
			return list[0].slot
		}
		if w := wildcardOf(name); w != "" {
			if list := s.claims[claimKey(port, w)]; len(list) > 0 {
				return list[0].slot
			}
		}
	}
	if list := s.claims[claimKey(port, "")]; len(list) > 0 {
		return list[0].slot
	}
	return nil
}

func (s *Store) configSlotFor(port int, name string) *Slot {
	var byPort *Slot
	wild := wildcardOf(name)
	for _, c := range s.config {
		if c.port != port {
			continue
		}
		if c.host == "" {
			if byPort == nil {
				byPort = c.slot
			}
		} else if name != "" && (c.host == name || c.host == wild) {
			return c.slot
		}
	}
	return byPort
}

// wantsClientCert: requestCert is per connection and decided before the client says
// which host it wants, so a port asks when any of its certificates does. Under the lock.
func (s *Store) wantsClientCert(port int) bool {
	for _, c := range s.config {
		if c.port == port && c.slot.requestCert {
			return true
		}
	}
	for k, list := range s.claims {
		if portOfClaim(k) == port && list[0].slot.requestCert {
			return true
		}
	}
	return false
}

// ServerConfig is a TLS port's configuration: each handshake takes the certificate of
// its SNI name as the store holds it at that moment.
func (s *Store) ServerConfig(port int) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12, // node's default minimum
		NextProtos: s.nextProtos(),
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			return s.configFor(port, hello.ServerName)
		},
	}
}

func (s *Store) nextProtos() []string {
	if s.h2() {
		return []string{"h2", "http/1.1"}
	}
	return []string{"http/1.1"}
}

var errNoCertificate = errors.New("no certificate for this port and server name")

func (s *Store) configFor(port int, serverName string) (*tls.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := s.slotFor(port, strings.ToLower(serverName))
	if slot == nil {
		return nil, errNoCertificate
	}
	k := configKey{slot, port}
	if cfg := s.configs[k]; cfg != nil {
		return cfg, nil
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		NextProtos:   s.nextProtos(),
		Certificates: slot.certs,
		// the verdict is ours (Judge), after the handshake: Go only asks for the certificate
		ClientAuth: tls.NoClientCert,
	}
	if s.wantsClientCert(port) {
		cfg.ClientAuth = tls.RequestClientCert
		cfg.ClientCAs = slot.names // names the CA in the CertificateRequest
	}
	cfg.SetSessionTicketKeys([][32]byte{s.ticketKey(port)})
	s.limitSessions(cfg)
	s.configs[k] = cfg
	return cfg, nil
}

// limitSessions: a session resumes for SessionTimeout after its ticket was issued,
// node's lifetime (Go's own is 7 days): the ticket carries its issue time.
func (s *Store) limitSessions(cfg *tls.Config) {
	cfg.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		ss.Extra = append(ss.Extra, binary.BigEndian.AppendUint64(nil, uint64(s.now().Unix())))
		return cfg.EncryptTicket(cs, ss)
	}
	cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := cfg.DecryptTicket(identity, cs)
		if err != nil || ss == nil || len(ss.Extra) == 0 {
			return nil, err
		}
		if t := ss.Extra[len(ss.Extra)-1]; len(t) != 8 || s.now().Unix()-int64(binary.BigEndian.Uint64(t)) > int64(SessionTimeout/time.Second) {
			return nil, nil // a full handshake
		}
		return ss, nil
	}
}

// ticketKey is port's session ticket key, for the router's life. Under the lock.
func (s *Store) ticketKey(port int) [32]byte {
	k, ok := s.tickets[port]
	if !ok {
		_, _ = rand.Read(k[:])
		s.tickets[port] = k
	}
	return k
}

// Verdict is the router's judgement of a connection whose handshake is done.
type Verdict struct {
	Slot               *Slot // the entry it serves; nil: none (no certificate for it now)
	Peer               *x509.Certificate
	Authorized         bool
	AuthorizationError string
	Refuse             bool // the entry requires a verified certificate and this one is not
}

// Judge takes the verdict on a connection of port (tls-store.js judge). Go knows the
// server name of a resumed TLS 1.2 session (node does not), so the entry is always
// the name's.
func (s *Store) Judge(port int, cs *tls.ConnectionState) Verdict {
	s.mu.Lock()
	v := Verdict{Slot: s.slotFor(port, strings.ToLower(cs.ServerName))}
	s.mu.Unlock()
	if len(cs.PeerCertificates) > 0 {
		v.Peer = cs.PeerCertificates[0]
	}
	slot := v.Slot
	if slot == nil || !slot.requestCert {
		return v
	}
	switch {
	case v.Peer == nil:
		// node's word for a handshake without a certificate
		v.AuthorizationError = "UNABLE_TO_GET_ISSUER_CERT"
		if cs.DidResume {
			v.AuthorizationError = "NO_CERTIFICATE"
		}
	case !cs.DidResume:
		// (outside the lock: a chain's signatures are the costly part, on every core)
		v.AuthorizationError = verify(slot, cs.PeerCertificates, s.now())
		v.Authorized = v.AuthorizationError == ""
		if v.Authorized {
			s.mu.Lock()
			s.rememberVerified(port, slot, v.Peer)
			s.mu.Unlock()
		}
	default:
		// the session's certificate may have been taken for another entry, or for none:
		// only this router's record of a full handshake counts
		k := verifiedKey(port, slot, v.Peer)
		s.mu.Lock()
		if s.verified != nil {
			_, v.Authorized = s.verified.get(k)
		}
		s.mu.Unlock()
		if !v.Authorized {
			v.AuthorizationError = "SESSION_NOT_VERIFIED"
		}
	}
	v.Refuse = !v.Authorized && slot.rejectUnauthorized
	return v
}

func (s *Store) rememberVerified(port int, slot *Slot, peer *x509.Certificate) {
	// made at the first verified certificate: a router that never sees one pays nothing
	if s.verified == nil {
		s.verified = newLRU(VerifiedMax, SessionTimeout, s.now)
	}
	s.verified.set(verifiedKey(port, slot, peer), slot.key)
}

// Misdirected reports whether a request for hostname (lower case, no port) on a
// connection judged slot is for another certificate entry than the handshake's (RFC
// 9110 15.5.20): the client-certificate policy it passed is not its app's.
func (s *Store) Misdirected(port int, slot *Slot, hostname string) bool {
	// no host (HTTP/1.0): routed to a wildcard prefix, no entry is named
	if hostname == "" {
		return false
	}
	s.mu.Lock()
	target := s.slotFor(port, hostname)
	s.mu.Unlock()
	if target == nil || target == slot {
		return false
	}
	return slot == nil || target.key != slot.key
}

// ---------------------------------------------------------------------------------

// roots: node's default CAs, for an entry that asks for client certificates without a CA.
func makeSlot(e Entry, key string, roots []*x509.Certificate) (*Slot, error) {
	certs, pfxCAs := e.certs, e.pfxCAs
	if certs == nil {
		if e.Cert != "" || e.Key != "" {
			cert, err := tls.X509KeyPair([]byte(e.Cert), []byte(e.Key))
			if err != nil {
				return nil, err
			}
			certs = append(certs, cert)
		}
		for _, p := range e.PFX {
			der, err := base64.StdEncoding.DecodeString(p)
			if err != nil {
				return nil, errors.New("the pfx is not base64: " + err.Error())
			}
			cert, chain, err := loadPFX(der, e.Passphrase)
			if err != nil {
				return nil, err
			}
			certs = append(certs, cert)
			pfxCAs = append(pfxCAs, chain...)
		}
		if len(certs) == 0 {
			return nil, errors.New("no certificate was given (cert, or pfx)")
		}
	}
	slot := &Slot{key: key, certs: certs, requestCert: e.RequestCert, rejectUnauthorized: e.RejectUnauthorized == nil || *e.RejectUnauthorized}
	if e.RequestCert {
		slot.ca = x509.NewCertPool()
		slot.names = x509.NewCertPool()
		h := sha256.New()
		if e.CA != "" {
			if !slot.ca.AppendCertsFromPEM([]byte(e.CA)) {
				return nil, errors.New("the CA holds no PEM certificate")
			}
			slot.names.AppendCertsFromPEM([]byte(e.CA))
			h.Write([]byte(e.CA))
		} else {
			// node's default roots, unnamed (defaultca.go); a verification is for them
			for _, c := range roots {
				slot.ca.AddCert(c)
			}
			h.Write([]byte("default roots\x00"))
			for _, c := range roots {
				h.Write(c.Raw)
			}
		}
		// node trusts a pfx's other certificates for client certificates too, and names
		// them in the CertificateRequest (its LoadPKCS12 adds them to the context's store)
		for _, c := range pfxCAs {
			slot.ca.AddCert(c)
			slot.names.AddCert(c)
			h.Write(c.Raw)
		}
		slot.policy = hex.EncodeToString(h.Sum(nil))
	}
	return slot, nil
}

// verify checks a client's chain against the slot's CA, as OpenSSL does for a server
// (purpose sslclient); the error is named as node names it (socket.authorizationError).
func verify(slot *Slot, chain []*x509.Certificate, now time.Time) string {
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	leaf := chain[0]
	_, err := leaf.Verify(x509.VerifyOptions{Roots: slot.ca, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err == nil {
		return ""
	}
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		if len(chain) == 1 && selfSigned(leaf) {
			return "DEPTH_ZERO_SELF_SIGNED_CERT"
		}
		if len(chain) == 1 {
			return "UNABLE_TO_VERIFY_LEAF_SIGNATURE"
		}
		return "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"
	case errors.As(err, &ci):
		switch ci.Reason {
		case x509.Expired:
			if now.Before(ci.Cert.NotBefore) {
				return "CERT_NOT_YET_VALID"
			}
			return "CERT_HAS_EXPIRED"
		case x509.IncompatibleUsage:
			return "INVALID_PURPOSE"
		}
	}
	return "CERT_REJECTED"
}

// selfSigned is OpenSSL's test: the issuer is the subject and the key signs it (a CA
// flag is not needed, as it is for CheckSignatureFrom).
func selfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}

// verifiedKey: the certificate verified for this entry's CA on this port.
func verifiedKey(port int, slot *Slot, peer *x509.Certificate) string {
	fp := sha256.Sum256(peer.Raw)
	return strconv.Itoa(port) + " " + hex.EncodeToString(fp[:]) + " " + slot.key + " " + slot.policy
}

func claimKey(port int, host string) string { return strconv.Itoa(port) + " " + host }

func portOfClaim(k string) int {
	p, _ := strconv.Atoi(k[:strings.IndexByte(k, ' ')])
	return p
}

// wildcardOf is the *.wildcard entry that covers name ("" for none).
func wildcardOf(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		return "*" + name[i:]
	}
	return ""
}
