// Command wire-driver runs the router's frame codec (router/internal/wire) for
// test/unit/router/wire-cross.test.js, which holds it to src/wire/protocol.js byte for
// byte. Modes (the first argument):
//
//	reencode [buffer]  frames on stdin are read (through a Reader of buffer bytes),
//	                   decoded by type and encoded again; the bytes go to stdout
//	encode             one JSON frame description per line on stdin (see spec); the
//	                   encoded frames go to stdout
//	check              frames on stdin (a worker's) get the router's checks; one JSON line
//	                   per frame: {"type": t, "id": n, "error": reason|null}
//	constants          the protocol's numbers as JSON
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"httpsys/router/internal/wire"
)

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	var err error
	switch mode {
	case "reencode":
		size := 64 << 10
		if len(os.Args) > 2 {
			if size, err = strconv.Atoi(os.Args[2]); err != nil {
				break
			}
		}
		err = reencode(size)
	case "encode":
		err = encode()
	case "check":
		err = check()
	case "constants":
		err = json.NewEncoder(os.Stdout).Encode(constants())
	default:
		err = errors.New("usage: wire-driver reencode [buffer] | encode | check | constants")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wire-driver:", err)
		os.Exit(1)
	}
}

func reencode(size int) error {
	r := wire.NewReader(bufio.NewReaderSize(os.Stdin, 4096), size)
	w := wire.NewWriter(64 << 10)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for {
		f, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		// everything this read brought, then one write: bodies are queued by reference
		// to the read buffer, which the next Next may reuse
		for ok := true; ok; f, ok, err = r.NextBuffered() {
			if err := again(w, f); err != nil {
				return fmt.Errorf("%v %d: %w", f.Type, f.ID, err)
			}
		}
		if err != nil {
			return err
		}
		if _, err := w.WriteTo(out); err != nil {
			return err
		}
	}
}

// again decodes f and appends what it decoded to w.
func again(w *wire.Writer, f wire.Frame) error {
	switch f.Type {
	case wire.TypeHello, wire.TypeHelloOK, wire.TypeHelloErr, wire.TypeClose:
		_, js, err := f.JSON()
		if err != nil {
			return err
		}
		return w.JSON(f.Type, f.ID, js)
	case wire.TypeRequest:
		req, err := f.Request()
		if err != nil {
			return err
		}
		w.BeginRequest(f.ID, &req)
		for name, value := range req.Fields.All() {
			w.Field(name, value)
		}
		return w.End()
	case wire.TypeBody:
		return w.Body(f.ID, f.Payload)
	case wire.TypeResBody:
		if len(f.Payload) == 0 {
			return errors.New("RES_BODY without its flags byte")
		}
		return w.ResBody(f.ID, f.Payload[0], f.Payload[1:])
	case wire.TypeBodyEnd:
		l, _, err := f.Trailers()
		if err != nil {
			return err
		}
		w.BeginBodyEnd(f.ID)
		for name, value := range l.All() {
			w.Field(name, value)
		}
		return w.End()
	case wire.TypeAck, wire.TypeRead, wire.TypeWindow:
		v, err := f.U32()
		if err != nil {
			return err
		}
		w.U32(f.Type, f.ID, v)
		return nil
	case wire.TypeResponse, wire.TypeInfo:
		res, err := f.Response()
		if err != nil {
			return err
		}
		if f.Type == wire.TypeInfo {
			return w.Info(f.ID, &res)
		}
		return w.Response(f.ID, &res)
	case wire.TypeAbort, wire.TypeContinue, wire.TypeCancel, wire.TypeDetach, wire.TypeDetachOK, wire.TypeConnClosed, wire.TypeConnEnd, wire.TypeConnFin:
		if len(f.Payload) != 0 {
			return errors.New("a payload on a frame that has none")
		}
		w.Empty(f.Type, f.ID)
		return nil
	}
	return fmt.Errorf("unknown frame type %d", f.Type)
}

// spec describes one frame; strings are latin1 (code points 0-255), bytes base64.
type spec struct {
	Type          wire.Type `json:"type"`
	ID            uint32    `json:"id"`
	Flags         uint8     `json:"flags"`
	VersionMajor  uint8     `json:"versionMajor"`
	VersionMinor  uint8     `json:"versionMinor"`
	Family        uint8     `json:"family"`
	RemotePort    uint16    `json:"remotePort"`
	LocalPort     uint16    `json:"localPort"`
	ConnectionID  uint32    `json:"connectionId"`
	Method        string    `json:"method"`
	URL           string    `json:"url"`
	RemoteAddress string    `json:"remoteAddress"`
	LocalAddress  string    `json:"localAddress"`
	Fields        []string  `json:"fields"` // name, value, ...
	TLS           *tlsSpec  `json:"tls"`
	Head          []byte    `json:"head"`
	Status        uint16    `json:"status"`
	CacheTTL      uint32    `json:"cacheTtl"`
	Reason        string    `json:"reason"`
	HeaderBlock   string    `json:"headerBlock"`
	Body          []byte    `json:"body"`
	Value         uint32    `json:"value"`
	JSON          string    `json:"json"`
}

type tlsSpec struct {
	Authorized         bool   `json:"authorized"`
	Protocol           string `json:"protocol"`
	CipherName         string `json:"cipherName"`
	CipherStandardName string `json:"cipherStandardName"`
	CipherVersion      string `json:"cipherVersion"`
	ALPNProtocol       string `json:"alpnProtocol"`
	ServerName         string `json:"servername"`
	AuthorizationError string `json:"authorizationError"`
	Certificate        []byte `json:"certificate"`
}

// latin1 turns a JSON string of code points 0-255 into those bytes.
func latin1(s string) []byte {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return b
}

func encode() error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 256<<20)
	w := wire.NewWriter(64 << 10)
	for in.Scan() {
		var s spec
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			return err
		}
		if err := put(w, &s); err != nil {
			return fmt.Errorf("%v %d: %w", s.Type, s.ID, err)
		}
	}
	if err := in.Err(); err != nil {
		return err
	}
	_, err := w.WriteTo(os.Stdout)
	return err
}

func put(w *wire.Writer, s *spec) error {
	switch s.Type {
	case wire.TypeHello, wire.TypeHelloOK, wire.TypeHelloErr, wire.TypeClose:
		return w.JSON(s.Type, s.ID, []byte(s.JSON))
	case wire.TypeRequest:
		req := wire.Request{Flags: s.Flags, VersionMajor: s.VersionMajor, VersionMinor: s.VersionMinor, Family: s.Family,
			RemotePort: s.RemotePort, LocalPort: s.LocalPort, ConnectionID: s.ConnectionID, Method: string(latin1(s.Method)),
			URL: latin1(s.URL), RemoteAddress: string(latin1(s.RemoteAddress)), LocalAddress: string(latin1(s.LocalAddress)), Head: s.Head}
		if t := s.TLS; t != nil {
			req.TLS = wire.AppendTLSInfo(nil, &wire.TLSInfo{Authorized: t.Authorized, Protocol: string(latin1(t.Protocol)),
				CipherName: string(latin1(t.CipherName)), CipherStandardName: string(latin1(t.CipherStandardName)),
				CipherVersion: string(latin1(t.CipherVersion)), ALPNProtocol: string(latin1(t.ALPNProtocol)),
				ServerName: string(latin1(t.ServerName)), AuthorizationError: string(latin1(t.AuthorizationError)), Certificate: t.Certificate})
		}
		w.BeginRequest(s.ID, &req)
		for i := 0; i+1 < len(s.Fields); i += 2 {
			w.Field(latin1(s.Fields[i]), latin1(s.Fields[i+1]))
		}
		return w.End()
	case wire.TypeBody:
		return w.Body(s.ID, s.Body)
	case wire.TypeResBody:
		return w.ResBody(s.ID, s.Flags, s.Body)
	case wire.TypeBodyEnd:
		w.BeginBodyEnd(s.ID)
		for i := 0; i+1 < len(s.Fields); i += 2 {
			w.Field(latin1(s.Fields[i]), latin1(s.Fields[i+1]))
		}
		return w.End()
	case wire.TypeAck, wire.TypeRead, wire.TypeWindow:
		w.U32(s.Type, s.ID, s.Value)
		return nil
	case wire.TypeResponse:
		return w.Response(s.ID, &wire.Response{Status: s.Status, Flags: s.Flags, CacheTTL: s.CacheTTL, Reason: latin1(s.Reason), HeaderBlock: latin1(s.HeaderBlock), Body: s.Body})
	case wire.TypeInfo:
		return w.Info(s.ID, &wire.Response{Status: s.Status, Reason: latin1(s.Reason), HeaderBlock: latin1(s.HeaderBlock)})
	}
	w.Empty(s.Type, s.ID)
	return nil
}

func check() error {
	r := wire.NewReader(os.Stdin, 64<<10)
	enc := json.NewEncoder(os.Stdout)
	for {
		f, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		line := map[string]any{"type": f.Type, "id": f.ID, "error": nil}
		var pe *wire.ProtocolError
		if err := wire.CheckFromWorker(f); errors.As(err, &pe) {
			line["error"] = pe.Reason
		} else if err != nil {
			return err
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
}

func constants() map[string]any {
	types := map[string]wire.Type{}
	for t := wire.Type(0); t < 64; t++ {
		if name := t.String(); name[0] != 't' {
			types[name] = t
		}
	}
	return map[string]any{
		"VERSION": wire.Version, "HEADER_SIZE": wire.HeaderSize, "MAX_FRAME": wire.MaxFrame, "T": types,
		"REQ_HAS_BODY": wire.ReqHasBody, "REQ_KEEP_ALIVE": wire.ReqKeepAlive, "REQ_ENCRYPTED": wire.ReqTLS,
		"REQ_EXPECT_CONTINUE": wire.ReqExpectContinue, "REQ_UPGRADE": wire.ReqUpgrade, "REQ_EXPECT_OTHER": wire.ReqExpectOther,
		"REQ_GRANTED_WINDOW": wire.ReqGrantedWindow, "REQ_HEAD": wire.ReqHead, "RES_HAS_CONNECTION": wire.ResHasConnection,
		"RESPONSE_MORE": wire.ResMore, "RESPONSE_CLOSE": wire.ResClose, "RESPONSE_OPAQUE": wire.ResOpaque, "RESPONSE_KEEP_OPEN": wire.ResKeepOpen,
		"DEFAULT_RECEIVE_WINDOW": wire.DefaultReceiveWindow, "INITIAL_BODY_WINDOW": wire.InitialBodyWindow,
		"RESPONSE_WINDOW": wire.ResponseWindow, "GRANTED_WINDOW_START": wire.GrantedWindowStart,
	}
}
