package control

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/logger"
)

type echoCmd struct {
	Command
	Name string `json:"name"`
}

func TestCommandsAreAnsweredInOrderWithTheirIdAndCodedErrors(t *testing.T) {
	var out bytes.Buffer
	ch := New(&out, logger.Discard())
	after := false
	ch.Handle("echo", func(line []byte) (any, error) {
		var a echoCmd
		if err := Decode(line, &a); err != nil {
			return nil, err
		}
		if a.Name == "" {
			return nil, coded.New(coded.QueueNotFound, "no name", map[string]any{"queue": ""})
		}
		return map[string]any{"name": a.Name}, nil
	})
	ch.Handle("bye", func([]byte) (any, error) {
		return Then{After: func() { after = true }}, nil
	})
	in := strings.Join([]string{
		`{"id":1,"cmd":"echo","name":"a"}`,
		`{"id":2,"cmd":"echo"}`,
		`{"id":3,"cmd":"echo","name":"a","extra":true}`,
		`{"id":4,"cmd":"what"}`,
		`not json`,
		`{"id":5,"cmd":"bye"}`,
	}, "\n") + "\n"
	if err := ch.Serve(strings.NewReader(in), nil); err != nil {
		t.Fatal(err)
	}
	ch.Event("attach", map[string]any{"queue": "q", "pid": 7})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"id":1,"ok":true,"name":"a"}`,
		`{"id":2,"error":{"code":"ERR_HTTPSYS_QUEUE_NOT_FOUND","message":"no name","details":{"queue":""}}}`,
		`{"id":3,"error":{"code":"ERR_INVALID_ARG_VALUE"`,
		`{"id":4,"error":{"code":"ERR_INVALID_ARG_VALUE","message":"unknown command \"what\""}}`,
		`{"id":0,"error":{"code":"ERR_INVALID_ARG_VALUE"`,
		`{"id":5,"ok":true}`,
		`{"event":"attach","pid":7,"queue":"q"}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %s\nwant prefix %s", i, lines[i], w)
		}
		if !json.Valid([]byte(lines[i])) {
			t.Errorf("line %d is not JSON: %s", i, lines[i])
		}
	}
	if !after {
		t.Error("Then.After did not run")
	}
}

// The end of stdin is heard while a command still runs (a close waiting for its
// responses): the supervisor is gone, and the router must not outlive it (issue 25).
func TestTheEndOfInputIsHeardWhileACommandRuns(t *testing.T) {
	ch := New(io.Discard, logger.Discard())
	release := make(chan struct{})
	ch.Handle("slow", func([]byte) (any, error) {
		<-release
		return nil, nil
	})
	pr, pw := io.Pipe()
	ended := make(chan error, 1)
	served := make(chan error, 1)
	go func() { served <- ch.Serve(pr, func(err error) { ended <- err }) }()
	if _, err := io.WriteString(pw, `{"id":1,"cmd":"slow"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("onEnd(%v), want nil at the input's end", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the end of the input was not heard while a command ran")
	}
	select {
	case <-served:
		t.Fatal("Serve returned before the command it read was handled")
	default:
	}
	close(release)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
