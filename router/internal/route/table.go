package route

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Table is one router's registrations, for every port, and the HTTP.SYS routing
// decision. The zero Table is empty and ready. Route may be called from any number of
// goroutines at once, and never waits: it reads an immutable snapshot of the table
// through one atomic pointer. Add and Remove (rare: the supervisor registering and
// unregistering apps' prefixes) build the next snapshot under a lock and swap it in;
// a Route that started before sees the old table whole, never half of a change.
type Table struct {
	mu      sync.Mutex        // held by Add and Remove
	entries []*entry          // in registration order; changed only under mu
	byKey   map[string]*entry // conflict key -> entry; changed only under mu
	snap    atomic.Pointer[snapshot]
}

type entry struct {
	key     string
	prefix  Prefix
	target  any
	pathKey string
	ip      addr // an IP-bound prefix's address
	result  Result
}

// snapshot is the routing structure, never changed once published.
type snapshot struct {
	ports map[int]*schemes
}

type schemes struct {
	http, https *bucket
}

// bucket is one port and scheme's prefixes by host category, each list longest path
// first (and, among paths of one length, in registration order).
type bucket struct {
	strong   []*entry
	explicit map[string][]*entry // by host name
	ip       map[addr][]*entry   // by address, IPv4 IPv4-mapped
	weak     []*entry
}

// Add registers p, for requests Route will answer with target. p is read from its
// normal form p.Prefix, parsed again (so a Prefix built by hand is checked; port 0 is
// refused: a registration has a real port), as the JS's add() does. The error is an
// *Error for a bad prefix, or a *ConflictError when an equivalent prefix is registered.
func (t *Table) Add(p Prefix, target any) error {
	parsed, err := Parse(p.Prefix, false)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := conflictKey(&parsed)
	if existing, ok := t.byKey[key]; ok {
		return &ConflictError{Prefix: parsed.Prefix, Owner: existing.target}
	}
	e := &entry{key: key, prefix: parsed, target: target, pathKey: pathKey(parsed.Path)}
	e.result = Result{Target: target, Prefix: parsed.Prefix}
	if parsed.HostKind == IP {
		e.ip, _ = parseIP(parsed.IP)
	}
	if t.byKey == nil {
		t.byKey = make(map[string]*entry)
	}
	t.byKey[key] = e
	t.entries = append(t.entries, e)
	t.publish()
	return nil
}

// Remove unregisters the prefix equivalent to p (read from p.Prefix, as Add reads it);
// false when none is registered, or p.Prefix is not a valid prefix.
func (t *Table) Remove(p Prefix) bool {
	parsed, err := Parse(p.Prefix, false)
	if err != nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	key := conflictKey(&parsed)
	e, ok := t.byKey[key]
	if !ok {
		return false
	}
	delete(t.byKey, key)
	t.entries = slices.DeleteFunc(t.entries, func(x *entry) bool { return x == e })
	t.publish()
	return true
}

// Has reports whether a prefix equivalent to p is registered.
func (t *Table) Has(p Prefix) bool {
	parsed, err := Parse(p.Prefix, false)
	if err != nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.byKey[conflictKey(&parsed)]
	return ok
}

// Len is the number of registered prefixes.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// Entry is one registration.
type Entry struct {
	Prefix Prefix
	Target any
}

// Entries are the registrations, in registration order.
func (t *Table) Entries() []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Entry, len(t.entries))
	for i, e := range t.entries {
		out[i] = Entry{Prefix: e.prefix, Target: e.target}
	}
	return out
}

// Ports are the distinct ports with a registration, ascending.
func (t *Table) Ports() []int {
	s := t.snap.Load()
	if s == nil {
		return nil
	}
	out := make([]int, 0, len(s.ports))
	for port := range s.ports {
		out = append(out, port)
	}
	slices.Sort(out)
	return out
}

// Route routes one request as HTTP.SYS does: the host categories in order strong,
// explicit, IP-bound, weak; the first with a host and path match wins, longest path
// first. Paths match case-insensitively on segment boundaries (the prefix /api/ takes
// /api and /api/x, never /apix), after the target is canonicalised (CanonicalTarget);
// an absolute-form target names the host itself (RFC 9112 3.2.2). No registration for
// the host: 400 ("Bad Request - Invalid Hostname", or "Invalid URL" for a malformed
// target: IsInvalidUrl tells which); a host that is served but not under this path:
// 404. An ordinary path with a known Host costs no allocation.
func (t *Table) Route(a Args) Result {
	s := t.snap.Load()
	if s == nil {
		return Result{Status: 400}
	}
	sc := s.ports[a.Port]
	if sc == nil {
		return Result{Status: 400}
	}
	var b *bucket
	switch a.Scheme {
	case "", "http":
		b = sc.http
	case "https":
		b = sc.https
	}
	if b == nil {
		return Result{Status: 400}
	}

	p, host := a.Path, a.Host
	end := fastPathEnd(p)
	if end == -1 {
		c, ok := CanonicalTarget(p)
		if !ok {
			return Result{Status: 400}
		}
		p, end = c.Path, len(c.Path)
		if c.Absolute {
			host = c.Host
		}
	}

	hostMatched := false
	if len(b.strong) != 0 {
		hostMatched = true
		if e := longestMatch(b.strong, p, end); e != nil {
			return e.result
		}
	}
	if len(b.explicit) != 0 && host != "" {
		if list, ok := lookupHost(b.explicit, host); ok {
			hostMatched = true
			if e := longestMatch(list, p, end); e != nil {
				return e.result
			}
		}
	}
	if len(b.ip) != 0 && a.LocalAddress != "" {
		if key, ok := localAddr(a.LocalAddress); ok {
			if list, ok := b.ip[key]; ok {
				hostMatched = true
				if e := longestMatch(list, p, end); e != nil {
					return e.result
				}
			}
		}
	}
	if len(b.weak) != 0 {
		hostMatched = true
		if e := longestMatch(b.weak, p, end); e != nil {
			return e.result
		}
	}
	// HTTP.SYS: no registration for the Host -> "Bad Request - Invalid Hostname" (400);
	// a host that is served but not under this path -> 404.
	if hostMatched {
		return Result{Status: 404}
	}
	return Result{Status: 400}
}

// lookupHost finds a Host value's explicit prefixes without allocating: the name is
// lower-cased into a stack buffer when it has capitals (a map index by string(bytes)
// does not copy). Explicit host names are at most 253 bytes.
func lookupHost(m map[string][]*entry, host string) ([]*entry, bool) {
	name := hostnameSpan(host)
	if len(name) > 253 {
		return nil, false
	}
	var buf [253]byte
	for i := 0; i < len(name); i++ {
		if name[i] >= 'A' && name[i] <= 'Z' {
			n := copy(buf[:], name)
			for j := i; j < n; j++ {
				buf[j] = lowerByte(buf[j])
			}
			list, ok := m[string(buf[:n])]
			return list, ok
		}
	}
	list, ok := m[name]
	return list, ok
}

func longestMatch(list []*entry, p string, end int) *entry {
	for _, e := range list {
		if pathMatches(p, end, e.pathKey) {
			return e
		}
	}
	return nil
}

// pathMatches is the case-insensitive prefix test on segment boundaries: key "/api/"
// takes "/api/x" and "/api", never "/apix". key is lower case; p[:end] is folded on the
// fly; both start with '/'.
func pathMatches(p string, end int, key string) bool {
	var n int
	switch {
	case end >= len(key):
		n = len(key)
	case end == len(key)-1:
		n = end
	default:
		return false
	}
	for i := n - 1; i > 0; i-- {
		if lowerByte(p[i]) != key[i] {
			return false
		}
	}
	return true
}

// publish builds the snapshot of t.entries and swaps it in; under t.mu.
func (t *Table) publish() {
	s := &snapshot{ports: make(map[int]*schemes)}
	// longest path first; a stable sort keeps registration order among equals, as the
	// JS's insertSorted does
	sorted := slices.Clone(t.entries)
	slices.SortStableFunc(sorted, func(a, b *entry) int { return cmp.Compare(len(b.pathKey), len(a.pathKey)) })
	for _, e := range sorted {
		sc := s.ports[e.prefix.Port]
		if sc == nil {
			sc = &schemes{}
			s.ports[e.prefix.Port] = sc
		}
		bp := &sc.http
		if e.prefix.Scheme == "https" {
			bp = &sc.https
		}
		if *bp == nil {
			*bp = &bucket{explicit: make(map[string][]*entry), ip: make(map[addr][]*entry)}
		}
		b := *bp
		switch e.prefix.HostKind {
		case Strong:
			b.strong = append(b.strong, e)
		case Weak:
			b.weak = append(b.weak, e)
		case Explicit:
			b.explicit[e.prefix.Host] = append(b.explicit[e.prefix.Host], e)
		case IP:
			b.ip[e.ip] = append(b.ip[e.ip], e)
		}
	}
	t.snap.Store(s)
}

// ownerName is how a conflict names the registered prefix's owner, as the JS's
// String(target.name ?? target).
func ownerName(owner any) string {
	switch o := owner.(type) {
	case nil:
		return ""
	case interface{ Name() string }:
		return o.Name()
	case string:
		return o
	}
	return fmt.Sprint(owner)
}
