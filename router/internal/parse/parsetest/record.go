// Package parsetest runs a parse.Parser over input cut into pieces and records its
// events in the shape the fuzzer reads (test/fuzz rules.js checkEvents, differential.js
// against llhttp), so that split runs can be compared with each other and with node's
// parser (the parser's fuzz target, router/cmd/fuzz-driver). It checks the parser's
// contract on every call.
package parsetest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"httpsys/router/internal/parse"
)

// Event is one of: "head" (Head), "body" (Body: consecutive pieces merged), "complete"
// (Trailers, nil for none), "error" (Status, Reason), "finish" (Status, 0 for none).
type Event struct {
	Kind     string
	Head     *Head
	Body     []byte
	Trailers []string
	Status   int
	Reason   string
}

// Head is a snapshot of parse.Head with the fields the fuzzer's checks read (rules.js
// checkHead).
type Head struct {
	Method         string   `json:"method"`
	URL            string   `json:"url"`
	VersionMajor   int      `json:"versionMajor"`
	VersionMinor   int      `json:"versionMinor"`
	RawHeaders     []string `json:"rawHeaders"`
	Host           string   `json:"host"`
	ContentLength  int64    `json:"contentLength"`
	Chunked        bool     `json:"chunked"`
	KeepAlive      bool     `json:"keepAlive"`
	ExpectContinue bool     `json:"expectContinue"`
	ExpectOther    bool     `json:"expectOther"`
	Upgrade        bool     `json:"upgrade"`
	HasBody        bool     `json:"hasBody"`
}

// Latin1 is b as a string of the code points 0-255, as node's latin1 decoding makes it.
func Latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// Snapshot copies what h holds.
func Snapshot(h *parse.Head) *Head {
	s := &Head{
		Method: h.Method, URL: Latin1(h.URL()), VersionMajor: h.VersionMajor, VersionMinor: h.VersionMinor,
		RawHeaders: []string{}, Host: Latin1(h.Host()), ContentLength: h.ContentLength, Chunked: h.Chunked,
		KeepAlive: h.KeepAlive, ExpectContinue: h.ExpectContinue, ExpectOther: h.ExpectOther, Upgrade: h.Upgrade, HasBody: h.HasBody,
	}
	for i := range h.NumFields() {
		name, value := h.Field(i)
		s.RawHeaders = append(s.RawHeaders, Latin1(name), Latin1(value))
	}
	return s
}

// MarshalJSON writes the event as the fuzzer reads it: ["head", {...}],
// ["body", text], ["complete", trailers|null], ["error", status, reason],
// ["finish", status|null].
func (e Event) MarshalJSON() ([]byte, error) {
	switch e.Kind {
	case "head":
		return json.Marshal([]any{e.Kind, e.Head})
	case "body":
		return json.Marshal([]any{e.Kind, Latin1(e.Body)})
	case "complete":
		if e.Trailers == nil {
			return json.Marshal([]any{e.Kind, nil})
		}
		return json.Marshal([]any{e.Kind, e.Trailers})
	case "error":
		return json.Marshal([]any{e.Kind, e.Status, e.Reason})
	}
	if e.Status == 0 {
		return json.Marshal([]any{e.Kind, nil})
	}
	return json.Marshal([]any{e.Kind, e.Status})
}

// Result is what Record saw.
type Result struct {
	Events []Event
	// ErrorAt is the stream offset Parse returned with Failed, -1 without one
	ErrorAt int
	// Errored: Failed, or Finish reported an error
	Errored bool
	// Boundaries are the stream offsets where each Complete left the input: the end
	// of each message (test/fuzz's pause at every onComplete)
	Boundaries []int
}

// Pieces cuts input at the given [start, end) splits; nil splits is one piece.
func Pieces(input []byte, splits [][2]int) [][]byte {
	if splits == nil {
		return [][]byte{input}
	}
	out := make([][]byte, 0, len(splits))
	for _, s := range splits {
		out = append(out, input[s[0]:s[1]])
	}
	return out
}

// Plan is how Run feeds its pieces to the parser: the Go side of test/fuzz's plans.
type Plan struct {
	// Scribble: each piece is a copy, overwritten once the parser is done with it
	// (callers reuse their read buffers), and each head is compared at Complete with
	// what it was at GotHead (it must not point into the caller's bytes).
	Scribble bool
	// Stop is the chance, after each event that leaves bytes untaken, that the caller
	// stops there and comes back later with those bytes moved into a new buffer, in
	// front of its next read (a connection that stopped reading at a pause and then
	// compacted its buffer); the old bytes are overwritten. The parser has no pause of
	// its own: every event is a stop, and this is what a caller may do at one.
	Stop float64
	// Seed draws the stops.
	Seed uint64
}

// Record feeds the pieces to p in order, as a connection's reads, then calls Finish
// (Run with Plan{Scribble: scribble}).
func Record(p *parse.Parser, pieces [][]byte, scribble bool) (Result, error) {
	return Run(p, pieces, Plan{Scribble: scribble})
}

// Run feeds the pieces to p under plan, then calls Finish. A broken contract is an
// error.
func Run(p *parse.Parser, pieces [][]byte, plan Plan) (Result, error) {
	res := Result{ErrorAt: -1}
	var rng *rand.Rand
	copies := plan.Scribble || plan.Stop > 0
	if plan.Stop > 0 {
		rng = rand.New(rand.NewPCG(plan.Seed, 77))
	}
	queue := pieces
	if copies {
		queue = make([][]byte, len(pieces))
		for i, piece := range pieces {
			queue[i] = slices.Clone(piece)
		}
	}
	var head *Head // the message in progress
	base := 0      // the stream offset of the current buffer's first byte
	for qi := 0; qi < len(queue); qi++ {
		piece := queue[qi]
		rest := piece
		stopped := false
		for spins := 0; ; spins++ {
			if spins > len(piece)+1000 {
				return res, fmt.Errorf("no progress: Parse keeps returning events without taking bytes")
			}
			failed := p.Err() != nil
			n, ev := p.Parse(rest)
			if n < 0 || n > len(rest) {
				return res, fmt.Errorf("Parse took %d of %d bytes", n, len(rest))
			}
			if failed && (n != 0 || ev != parse.Failed) {
				return res, fmt.Errorf("Parse after Failed took %d bytes, event %d", n, ev)
			}
			rest = rest[n:]
			switch ev {
			case parse.NeedMore:
				if len(rest) != 0 {
					return res, fmt.Errorf("NeedMore with %d bytes left", len(rest))
				}
			case parse.GotHead:
				if head != nil {
					return res, fmt.Errorf("a head before the previous message completed")
				}
				head = Snapshot(p.Head())
				res.Events = append(res.Events, Event{Kind: "head", Head: head})
			case parse.GotBody:
				b := p.Body()
				if head == nil || !head.HasBody || len(b) == 0 {
					return res, fmt.Errorf("body piece of %d bytes outside a message with a body", len(b))
				}
				if last := len(res.Events) - 1; res.Events[last].Kind == "body" {
					res.Events[last].Body = append(res.Events[last].Body, b...)
				} else {
					res.Events = append(res.Events, Event{Kind: "body", Body: slices.Clone(b)})
				}
			case parse.Complete:
				if head == nil {
					return res, fmt.Errorf("Complete outside a message")
				}
				h := p.Head()
				if again := Snapshot(h); copies && !sameHead(again, head) {
					return res, fmt.Errorf("the head changed between GotHead and Complete: %+v, then %+v", head, again)
				}
				var trailers []string
				for i := range h.NumTrailers() {
					name, value := h.Trailer(i)
					trailers = append(trailers, Latin1(name), Latin1(value))
				}
				if trailers != nil && !head.Chunked {
					return res, fmt.Errorf("trailers on a message that is not chunked")
				}
				res.Events = append(res.Events, Event{Kind: "complete", Trailers: trailers})
				res.Boundaries = append(res.Boundaries, base+len(piece)-len(rest))
				head = nil
			case parse.Failed:
				err := p.Err()
				if err == nil || err.Reason == "" || (err.Status != 400 && err.Status != 413 && err.Status != 431 && err.Status != 505) {
					return res, fmt.Errorf("Failed with %+v", err)
				}
				if !failed {
					res.Events = append(res.Events, Event{Kind: "error", Status: err.Status, Reason: err.Reason})
					res.ErrorAt = base + len(piece) - len(rest)
					res.Errored = true
				}
				head = nil
			default:
				return res, fmt.Errorf("unknown event %d", ev)
			}
			if ev == parse.NeedMore || ev == parse.Failed {
				break
			}
			if rng != nil && len(rest) > 0 && rng.Float64() < plan.Stop {
				// the untaken bytes move in front of the next read
				carry := slices.Clone(rest)
				for i := range piece {
					piece[i] = 0xee
				}
				if qi+1 < len(queue) {
					queue[qi+1] = append(carry, queue[qi+1]...)
				} else {
					queue = append(queue, carry)
				}
				base += len(piece) - len(rest)
				stopped = true
				break
			}
		}
		if stopped {
			continue
		}
		if copies {
			for i := range piece {
				piece[i] = 0xee
			}
		}
		base += len(piece)
	}
	inMessage := head != nil
	fin := p.Finish()
	switch {
	case res.Errored && fin != nil:
		return res, fmt.Errorf("Finish after Failed reported %+v", fin)
	case fin != nil && fin.Status != 400:
		return res, fmt.Errorf("Finish reported %+v", fin)
	case fin == nil && inMessage && !res.Errored:
		return res, fmt.Errorf("Finish found nothing in progress inside a message")
	}
	if fin != nil {
		if p.Finish() != nil {
			return res, fmt.Errorf("Finish reported twice")
		}
		res.Events = append(res.Events, Event{Kind: "finish", Status: 400})
		res.Errored = true
	} else {
		res.Events = append(res.Events, Event{Kind: "finish"})
	}
	return res, nil
}

func sameHead(a, b *Head) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
