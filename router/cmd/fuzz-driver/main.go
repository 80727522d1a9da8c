// Command fuzz-driver runs the router's HTTP/1.1 parser (internal/parse) for the
// fuzzer in test/fuzz (go-driver.js): one process per batch of inputs, each parsed
// under several plans. It reads one JSON object per line on stdin:
//
//	{"input": base64, "options": {"maxHeaderSize": n, "maxBodySize": n|null, "strictHost": b, "requireHost": b, "connect": b, "lenient": b},
//	 "plans": [{"splits": [[start, end], ...]|null, "scribble": b, "stop": p, "seed": n, "prefix": base64|null}, ...]}
//
// and writes one line per input: {"plans": [...], "ns": n}, each plan's run as
// {"events", "boundaries", "errorAt", "errored"} (events as test/fuzz/rules.js
// reads them, parsetest.Event) or {"violation": "..."} when the parser broke its
// contract, and ns the time all plans took. A plan with a prefix parses the prefix
// first on the same parser, then Reset()s it. The first plan is the reference (one
// buffer); for a later plan that ends in Finish's 400 where the reference failed in
// a line the input never ends, "late" holds the reference and the plan run again on
// the input with an LF appended (test/fuzz/fuzz.js's "error-found-when-the-line-ends").
// With "time": true, the job is timed instead (timeJob).
package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"time"

	"httpsys/router/internal/jsonlines"
	"httpsys/router/internal/parse"
	"httpsys/router/internal/parse/parsetest"
)

type options struct {
	MaxHeaderSize *int   `json:"maxHeaderSize"`
	MaxBodySize   *int64 `json:"maxBodySize"` // null or absent: no limit
	StrictHost    *bool  `json:"strictHost"`
	RequireHost   *bool  `json:"requireHost"`
	Connect       bool   `json:"connect"`
	Lenient       bool   `json:"lenient"`
}

type plan struct {
	Splits   [][2]int `json:"splits"`
	Scribble bool     `json:"scribble"`
	Stop     float64  `json:"stop"`
	Seed     uint64   `json:"seed"`
	Prefix   []byte   `json:"prefix"`
}

type job struct {
	Input   []byte  `json:"input"`
	Options options `json:"options"`
	Plans   []plan  `json:"plans"`
	// Time: the first plan's pieces go through a bare Parse loop (no recording, no
	// checks) after a GC, and ns is its time alone: test/fuzz/scaling.js's time vs
	// size, which must not measure the recording
	Time bool `json:"time"`
	// Repeat: timed this many times after one untimed run; ns is the best
	Repeat int `json:"repeat"`
}

type run struct {
	Events     []parsetest.Event `json:"events,omitempty"`
	Boundaries []int             `json:"boundaries"`
	ErrorAt    int               `json:"errorAt"`
	Errored    bool              `json:"errored"`
	Violation  string            `json:"violation,omitempty"`
	Late       *late             `json:"late,omitempty"`
}

type late struct {
	Ref   run `json:"ref"`
	Again run `json:"again"`
}

type result struct {
	Plans []run `json:"plans"`
	NS    int64 `json:"ns"`
}

func main() {
	err := jsonlines.Serve(os.Stdin, os.Stdout, func(j *job) (any, error) { return runJob(j), nil })
	if err != nil {
		fmt.Fprintln(os.Stderr, "fuzz-driver:", err)
		os.Exit(1)
	}
}

func optionsOf(o options) parse.Options {
	opt := parse.DefaultOptions()
	if o.MaxHeaderSize != nil {
		opt.MaxHeaderSize = *o.MaxHeaderSize
	}
	if o.MaxBodySize != nil {
		opt.MaxBodySize = *o.MaxBodySize
	}
	if o.StrictHost != nil {
		opt.StrictHost = *o.StrictHost
	}
	if o.RequireHost != nil {
		opt.RequireHost = *o.RequireHost
	}
	opt.Connect, opt.Lenient = o.Connect, o.Lenient
	return opt
}

func runJob(j *job) result {
	opt := optionsOf(j.Options)
	if j.Time && len(j.Plans) > 0 {
		return timeJob(opt, j)
	}
	t0 := time.Now()
	res := result{Plans: make([]run, len(j.Plans))}
	for k := range j.Plans {
		res.Plans[k] = runPlan(opt, j.Input, &j.Plans[k])
	}
	res.NS = time.Since(t0).Nanoseconds()
	if len(res.Plans) == 0 || res.Plans[0].Violation != "" {
		return res
	}
	ref := &res.Plans[0]
	if ref.ErrorAt < 0 || bytes.IndexByte(j.Input[ref.ErrorAt:], '\n') >= 0 {
		return res
	}
	withLF := append(slices.Clone(j.Input), '\n')
	n := len(j.Input)
	for k := 1; k < len(res.Plans); k++ {
		r := &res.Plans[k]
		if r.Violation != "" || r.ErrorAt >= 0 || len(r.Events) == 0 || r.Events[len(r.Events)-1].Status != 400 {
			continue
		}
		pl := j.Plans[k]
		splits := pl.Splits
		if splits == nil {
			splits = [][2]int{{0, n}}
		}
		pl.Splits = append(slices.Clone(splits), [2]int{n, n + 1})
		whole := plan{}
		r.Late = &late{Ref: runPlan(opt, withLF, &whole), Again: runPlan(opt, withLF, &pl)}
	}
	return res
}

func runPlan(opt parse.Options, input []byte, pl *plan) run {
	p := parse.New(opt)
	if pl.Prefix != nil {
		if _, err := parsetest.Run(p, [][]byte{pl.Prefix}, parsetest.Plan{Scribble: pl.Scribble}); err != nil {
			return run{Violation: "on the prefix: " + err.Error()}
		}
		p.Reset()
	}
	res, err := parsetest.Run(p, parsetest.Pieces(input, pl.Splits), parsetest.Plan{Scribble: pl.Scribble, Stop: pl.Stop, Seed: pl.Seed})
	if err != nil {
		return run{Violation: err.Error()}
	}
	b := res.Boundaries
	if b == nil {
		b = []int{}
	}
	return run{Events: res.Events, Boundaries: b, ErrorAt: res.ErrorAt, Errored: res.Errored}
}

func timeJob(opt parse.Options, j *job) result {
	pieces := parsetest.Pieces(j.Input, j.Plans[0].Splits)
	var failed *parse.Error
	best := int64(math.MaxInt64)
	// one parser, Reset between runs as a connection's is: the warm-up run grows its
	// buffers, so the timed ones measure the parsing, not the heap's growth
	p := parse.New(opt)
	for r := range max(j.Repeat, 1) + 1 {
		p.Reset()
		runtime.GC()
		t0 := time.Now()
		failed = parseAll(p, pieces)
		if ns := time.Since(t0).Nanoseconds(); r > 0 { // the first run warms up
			best = min(best, ns)
		}
	}
	r := run{Events: []parsetest.Event{}, Boundaries: []int{}, ErrorAt: -1}
	if failed != nil {
		r.Events = append(r.Events, parsetest.Event{Kind: "error", Status: failed.Status, Reason: failed.Reason})
	}
	return result{Plans: []run{r}, NS: best}
}

// parseAll is the bare loop a connection runs: every piece to its end or a failure.
func parseAll(p *parse.Parser, pieces [][]byte) *parse.Error {
	for _, piece := range pieces {
		for {
			n, ev := p.Parse(piece)
			piece = piece[n:]
			if ev == parse.NeedMore || ev == parse.Failed {
				break
			}
		}
		if err := p.Err(); err != nil {
			return err
		}
	}
	return nil
}
