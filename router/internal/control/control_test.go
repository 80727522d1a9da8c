package control

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
	if err := ch.Serve(strings.NewReader(in)); err != nil {
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
