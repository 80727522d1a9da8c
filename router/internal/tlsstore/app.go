package tlsstore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"regexp"
	"strings"
	"time"
)

// AppLabel is what an app's key material is called in messages (src/tls-material.js).
const AppLabel = "the key and certificate the app passed to https.createServer()"

// MaterialError is key material an app sent that cannot serve: Reason is in the words
// of ERR_HTTPSYS_TLS_CERT's reason (src/tls-material.js loadMaterial).
type MaterialError struct{ Reason string }

func (e *MaterialError) Error() string { return e.Reason }

// an encrypted PEM private key: PKCS#8's own label, or a traditional key's header
var encryptedKey = regexp.MustCompile(`-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED`)

// AppMaterial decodes and checks an app's key material as HELLO carries it (`tls`:
// src/wire/protocol.js encodeTlsOptions: each value PEM text, {base64}, node's {pem,
// passphrase} and {buf, passphrase} forms, or a list of them). ok is false when it holds
// none. An encrypted PKCS#8 key arrives opened: the worker opens it with node's
// crypto (src/wire/tls-key.js), which reads every cipher OpenSSL does.
func AppMaterial(raw json.RawMessage, now time.Time) (e Entry, ok bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Entry{}, false, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return Entry{}, false, nil
	}
	fail := func(reason string) (Entry, bool, error) { return Entry{}, true, &MaterialError{Reason: reason} }
	var passphrase string
	_ = json.Unmarshal(m["passphrase"], &passphrase)
	certs := values(m["cert"])
	keys := values(m["key"])
	pfx := values(m["pfx"])
	cas := values(m["ca"])
	if len(certs) == 0 && len(keys) == 0 && len(pfx) == 0 && len(cas) == 0 {
		return Entry{}, false, nil
	}
	if len(pfx) == 0 && (len(certs) == 0 || len(keys) == 0) {
		if len(certs) == 0 {
			return fail("no certificate was given (cert, or pfx)")
		}
		return fail("the certificate has no private key (key)")
	}
	// each piece on its own first, as src/tls-material.js loadMaterial does
	if len(certs) > 0 {
		if _, err := firstCertificate(certs[0].data); err != nil {
			return fail("it holds no PEM certificate (" + err.Error() + ")")
		}
	}
	if len(keys) == 1 && encryptedKey.Match(keys[0].data) {
		if _, err := decryptKey(keys[0].data, keys[0].passphrase(passphrase)); err != nil {
			return fail("the private key is encrypted and the passphrase is wrong or missing")
		}
	}
	ca := bytes.Join(datas(cas), []byte("\n"))
	if len(cas) > 0 {
		if _, err := firstCertificate(ca); err != nil {
			return fail("it holds no PEM CA certificate (" + err.Error() + ")")
		}
	}
	served, err := pairs(certs, keys, passphrase)
	if err != nil {
		return fail(err.Error())
	}
	var pfxCAs []*x509.Certificate
	for _, p := range pfx {
		cert, chain, err := loadPFX(p.data, p.passphrase(passphrase))
		if err != nil {
			return fail(err.Error())
		}
		served = append(served, cert)
		pfxCAs = append(pfxCAs, chain...)
	}
	// the certificate node's context reports (the last one loaded) is the one checked
	leaf := served[len(served)-1].Leaf
	if now.After(leaf.NotAfter) {
		return fail("the certificate (" + subjectOf(leaf) + ") expired on " + isoTime(leaf.NotAfter))
	}
	if now.Before(leaf.NotBefore) {
		return fail("the certificate (" + subjectOf(leaf) + ") is not valid before " + isoTime(leaf.NotBefore))
	}
	var requestCert, reject bool
	reject = true
	_ = json.Unmarshal(m["requestCert"], &requestCert)
	_ = json.Unmarshal(m["rejectUnauthorized"], &reject)
	reject = requestCert && reject
	return Entry{CA: string(ca), RequestCert: requestCert, RejectUnauthorized: &reject, Label: AppLabel, certs: served, pfxCAs: pfxCAs}, true, nil
}

// pairs makes the served certificates of cert and key as node's context does: each
// cert value is a chain, each key goes with the last chain of its key type (OpenSSL
// keeps one certificate per key type), a key of a type no chain has is left unused.
func pairs(certs, keys []value, passphrase string) ([]tls.Certificate, error) {
	var out []tls.Certificate
	for _, k := range keys {
		key := k.data
		if encryptedKey.Match(key) {
			var err error
			if key, err = decryptKey(key, k.passphrase(passphrase)); err != nil {
				return nil, errors.New("the private key is encrypted and the passphrase is wrong or missing")
			}
		}
		for i := len(certs) - 1; i >= 0; i-- {
			cert, err := tls.X509KeyPair(certs[i].data, key)
			if err != nil && strings.Contains(err.Error(), "type does not match") {
				continue
			}
			if err != nil && strings.Contains(err.Error(), "does not match") {
				return nil, errors.New("the private key does not belong to the certificate")
			}
			if err != nil {
				return nil, errors.New("it is not a PEM certificate and key, or not the one it claims (" + err.Error() + ")")
			}
			out = append(out, cert)
			break
		}
	}
	if len(out) == 0 && len(keys) > 0 && len(certs) > 0 {
		// node would take the key and fail each handshake: refused here, at attach
		return nil, errors.New("the private key does not belong to the certificate")
	}
	return out, nil
}

// value is one item of an option: its bytes, and its own passphrase ({pem|buf, passphrase}).
type value struct {
	data []byte
	own  *string
}

// passphrase is the item's own, else the options' (node's rule).
func (v value) passphrase(shared string) string {
	if v.own != nil {
		return *v.own
	}
	return shared
}

func datas(vs []value) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = v.data
	}
	return out
}

// values reads one option: a value or a list of them.
func values(raw json.RawMessage) []value {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		list = []json.RawMessage{raw}
	}
	var out []value
	for _, r := range list {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, value{data: []byte(s)})
			continue
		}
		var o struct {
			Base64     *string         `json:"base64"`
			PEM        json.RawMessage `json:"pem"`
			Buf        json.RawMessage `json:"buf"`
			Passphrase *string         `json:"passphrase"`
		}
		if json.Unmarshal(r, &o) != nil {
			continue
		}
		switch {
		case o.Base64 != nil:
			if b, err := base64.StdEncoding.DecodeString(*o.Base64); err == nil {
				out = append(out, value{data: b})
			}
		case len(o.PEM) > 0 || len(o.Buf) > 0:
			inner := o.PEM
			if len(inner) == 0 {
				inner = o.Buf
			}
			for _, v := range values(inner) {
				out = append(out, value{data: v.data, own: o.Passphrase})
			}
		}
	}
	return out
}

func firstCertificate(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if blk.Type == "CERTIFICATE" {
			return x509.ParseCertificate(blk.Bytes)
		}
	}
}

// decryptKey opens a traditional encrypted PEM key (RFC 1421 headers); an encrypted
// PKCS#8 key is not opened here (the standard library has no PBES2 decoder).
func decryptKey(key []byte, passphrase string) ([]byte, error) {
	blk, _ := pem.Decode(key)
	if blk == nil || passphrase == "" || !x509.IsEncryptedPEMBlock(blk) { //nolint:staticcheck // legacy keys are what apps pass
		return nil, errors.New("cannot open")
	}
	der, err := x509.DecryptPEMBlock(blk, []byte(passphrase)) //nolint:staticcheck // as above
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: blk.Type, Bytes: der}), nil
}

func subjectOf(c *x509.Certificate) string {
	if c.Subject.CommonName != "" {
		return "CN=" + c.Subject.CommonName
	}
	return c.Subject.String()
}

// isoTime is JS's Date.toISOString().
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
