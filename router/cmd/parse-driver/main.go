// Command parse-driver runs the router's HTTP/1.1 parser for
// test/unit/router/parse-differential.test.js, which compares it with
// src/hub/http-parser.js. It reads one JSON object per line on stdin:
//
//	{"input": base64, "options": {"maxHeaderSize": n, "maxBodySize": n|null, "strictHost": b, "requireHost": b, "connect": b, "lenient": b}, "splits": [[start, end], ...]|null}
//
// and writes one line per input, {"events": [...]} as test/fuzz/hub-driver.js records
// them, or {"violation": "..."} when the parser broke its contract. With -methods it
// prints the methods it accepts instead.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

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

type job struct {
	Input   []byte   `json:"input"`
	Options options  `json:"options"`
	Splits  [][2]int `json:"splits"`
}

type result struct {
	Events    []parsetest.Event `json:"events,omitempty"`
	Violation string            `json:"violation,omitempty"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-methods" {
		json.NewEncoder(os.Stdout).Encode(parse.Methods())
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "parse-driver:", err)
		os.Exit(1)
	}
}

func run() error {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			var j job
			if err := json.Unmarshal([]byte(line), &j); err != nil {
				return fmt.Errorf("bad input line: %w", err)
			}
			if err := enc.Encode(runJob(&j)); err != nil {
				return err
			}
		}
		if err != nil {
			return nil // end of input
		}
	}
}

func runJob(j *job) result {
	opt := parse.DefaultOptions()
	if j.Options.MaxHeaderSize != nil {
		opt.MaxHeaderSize = *j.Options.MaxHeaderSize
	}
	if j.Options.MaxBodySize != nil {
		opt.MaxBodySize = *j.Options.MaxBodySize
	}
	if j.Options.StrictHost != nil {
		opt.StrictHost = *j.Options.StrictHost
	}
	if j.Options.RequireHost != nil {
		opt.RequireHost = *j.Options.RequireHost
	}
	opt.Connect, opt.Lenient = j.Options.Connect, j.Options.Lenient
	res, err := parsetest.Record(parse.New(opt), parsetest.Pieces(j.Input, j.Splits), false)
	if err != nil {
		return result{Violation: err.Error()}
	}
	return result{Events: res.Events}
}
