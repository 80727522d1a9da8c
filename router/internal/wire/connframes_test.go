package wire

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// CONN_OPEN and CONN_ERROR as docs/wire-protocol.md lays them out; the same bytes are
// what src/wire/protocol.js decodes (test/unit/wire/protocol.test.js holds the twin).
func TestConnFramesLayout(t *testing.T) {
	w := NewWriter(64)
	w.ConnOpen(7, &ConnOpen{Family: 4, RemotePort: 0x1234, LocalPort: 80, RemoteAddress: "1.2.3.4", LocalAddress: "5.6.7.8"})
	w.ConnError(7, 400, "bad", []byte("GET"))
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	want := "1c00000016070000000434125000070031 2e322e332e3407 00352e362e372e38" +
		"0f00000017070000009001030062616447 4554"
	want = string(bytes.ReplaceAll([]byte(want), []byte(" "), nil))
	if got := hex.EncodeToString(out.Bytes()); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	f, n, err := Parse(out.Bytes())
	if err != nil || f.Type != TypeConnOpen || f.ID != 7 {
		t.Fatalf("parse: %v %v", f, err)
	}
	o, ok := f.ConnOpen()
	if !ok || o != (ConnOpen{Family: 4, RemotePort: 0x1234, LocalPort: 80, RemoteAddress: "1.2.3.4", LocalAddress: "5.6.7.8"}) {
		t.Fatalf("ConnOpen: %+v %v", o, ok)
	}
	f, _, _ = Parse(out.Bytes()[n:])
	status, reason, raw, ok := f.ConnError()
	if !ok || status != 400 || string(reason) != "bad" || string(raw) != "GET" {
		t.Fatalf("ConnError: %d %q %q %v", status, reason, raw, ok)
	}
}
