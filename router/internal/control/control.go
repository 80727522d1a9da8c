// Package control is the router's control channel (docs/router-control.md): the
// supervisor writes one JSON command per line on the router's stdin and reads one JSON
// line per answer or event on its stdout. The router's logs go to stderr, so stdout
// carries nothing else. Commands are handled one at a time, in the order they came,
// as the supervisor awaits each answer; events may come between answers.
package control

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"httpsys/router/internal/coded"
)

// MaxLine is the longest command line (an app's TLS material rides in one).
const MaxLine = 16 << 20

// Command is what every command line holds; a handler's argument struct embeds it.
type Command struct {
	ID  int64  `json:"id"`
	Cmd string `json:"cmd"`
}

// Handler runs one command: line is the whole command line, to Decode into the
// handler's own argument struct. The result, a struct or map, becomes the answer's
// fields beside id and ok.
type Handler func(line []byte) (any, error)

// Channel reads commands and writes answers and events.
type Channel struct {
	log      *slog.Logger
	handlers map[string]Handler

	mu  sync.Mutex // one line at a time on out
	out io.Writer
}

// New returns a channel that writes to out.
func New(out io.Writer, log *slog.Logger) *Channel {
	return &Channel{out: out, log: log, handlers: map[string]Handler{}}
}

// Handle registers the handler of a command.
func (c *Channel) Handle(cmd string, h Handler) { c.handlers[cmd] = h }

// Decode reads a command line into v (a struct embedding Command); an unknown key is
// an error, as the config's options are checked where they enter.
func Decode(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return coded.New(coded.BadArgument, "the router cannot read the command: "+err.Error(), nil)
	}
	return nil
}

// Serve handles the lines of in until it ends: its end is the supervisor gone (or
// done), and Serve returns nil then, once the lines read are handled. in is read on
// while a command runs, so that end is seen at once even in the middle of a close
// (issue 25: the router dies with the supervisor however it dies): onEnd, when given,
// hears of it then (err: why in could not be read on; nil at its end).
func (c *Channel) Serve(in io.Reader, onEnd func(err error)) error {
	var (
		mu      sync.Mutex
		pending [][]byte
		ended   bool
	)
	wake := make(chan struct{}, 1)
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		for {
			mu.Lock()
			batch, last := pending, ended
			pending = nil
			mu.Unlock()
			for _, line := range batch {
				c.handle(line)
			}
			if last && len(batch) == 0 {
				return
			}
			if len(batch) == 0 {
				<-wake
			}
		}
	}()
	push := func(line []byte, end bool) {
		mu.Lock()
		if line != nil {
			pending = append(pending, line)
		}
		ended = ended || end
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		push(append([]byte(nil), line...), false)
	}
	err := sc.Err()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if onEnd != nil {
		onEnd(err)
	}
	push(nil, true)
	<-handled
	return err
}

func (c *Channel) handle(line []byte) {
	var cmd Command
	if err := json.Unmarshal(line, &cmd); err != nil {
		c.answer(0, nil, coded.New(coded.BadArgument, "a command line is not a JSON object: "+err.Error(), nil))
		return
	}
	h := c.handlers[cmd.Cmd]
	if h == nil {
		c.answer(cmd.ID, nil, coded.New(coded.BadArgument, "unknown command "+strconv.Quote(cmd.Cmd), nil))
		return
	}
	res, err := h(line)
	if t, ok := res.(Then); ok {
		c.answer(cmd.ID, t.Result, err)
		t.After()
		return
	}
	c.answer(cmd.ID, res, err)
}

// Then is a handler's result with something to do once the answer is written (close:
// the process exits after saying it closed).
type Then struct {
	Result any
	After  func()
}

func (c *Channel) answer(id int64, res any, err error) {
	head := `{"id":` + strconv.FormatInt(id, 10)
	if err != nil {
		// a failed command is answered as the supervisor rebuilds it (package coded)
		var ce *coded.Error
		if !errors.As(err, &ce) {
			ce = coded.New(coded.Failed, err.Error(), nil)
		}
		js, _ := json.Marshal(ce)
		c.line([]byte(head + `,"error":` + string(js) + "}"))
		return
	}
	c.line(splice([]byte(head+`,"ok":true`), res))
}

// Event writes {"event": name, ...fields}.
func (c *Channel) Event(name string, fields any) {
	js, _ := json.Marshal(name)
	c.line(splice([]byte(`{"event":`+string(js)), fields))
}

// splice closes head (an object's first members) with v's members, if v is an object.
func splice(head []byte, v any) []byte {
	if v != nil {
		js, err := json.Marshal(v)
		if err == nil && len(js) > 2 && js[0] == '{' {
			head = append(head, ',')
			return append(head, js[1:]...)
		}
	}
	return append(head, '}')
}

func (c *Channel) line(b []byte) {
	b = append(b, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.out.Write(b); err != nil {
		c.log.Debug("control channel write failed", "err", err)
	}
}
