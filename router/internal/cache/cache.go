// Package cache is the router's output cache (docs/output-cache.md): what HTTP.SYS's
// kernel response cache does on Windows, with
// the same rules. A worker marks a response cacheable by giving it a time to live (the
// RESPONSE frame's cacheTtl, from the app's config rules and its Cache-Control); the
// router copies such a response as it passes (a Capture) and stores it once complete.
// Later GET and HEAD requests for the same key are answered from memory before they are
// queued, without waking the app, with Age, one Range and conditional requests
// (If-None-Match, If-Modified-Since) answered here.
//
// Keys: scheme + the listener's port + the Host as the app saw it (lower case, with its
// port: a page that reflects its Host differs by it, issue 23) + the canonical request
// target (the path, and its query when the app's rule allowed one). One LRU holds every
// app's entries within a byte budget that counts each entry's key, head and body copies
// and its objects (as the JS router counted them, so a budget evicts as it did), and a
// bound on
// their number; a response above the per-response limit is not stored. A request with a
// client certificate is treated like one with Authorization unless the app says
// `Cache-Control: public` (RFC 9111 3.5, issue 23). An App's entries go when one of its
// instances attaches or leaves and when its queue goes (Invalidate).
//
// One lock guards the LRU; a hit holds it for a map lookup and a list move, and builds
// its answer outside it from the entry, which never changes once stored.
package cache

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// What an entry costs besides the bytes its size counts (measured on node for the
	// JS router; kept so that a budget holds as many entries as it did).
	entryOverhead = 512
	// Copies of an entry's head lines the JS router's entry could hold: counted alike
	// here.
	lineCopies = 3
	// At most one entry per this many bytes of the budget: the number of entries is
	// bounded even where the count above is short of the real cost.
	bytesPerEntry = 1024
	// Bodies below this count twice (the JS router kept them joined with their head).
	joinedBody = 16384
	// How many sweeps (clock ticks) between two purges of expired entries: 10 s.
	purgeEvery = 10
)

// Defaults of the start command's cacheSize and cacheMaxResponse limits.
const (
	DefaultMaxSize         = 64 << 20
	DefaultMaxResponseSize = 256 << 10 // HTTP.SYS's UriMaxUriBytes
)

// Options size a Cache.
type Options struct {
	MaxSize         int64 // bytes all entries may take together (a Cache needs more than 0)
	MaxResponseSize int64 // the largest response body stored
	MaxEntries      int   // 0: one per KB of MaxSize
	// Now is the wall clock in ms (tests); nil: time.Now
	Now func() int64
}

// Cache is the router's one output cache, shared by every queue whose app has it on.
type Cache struct {
	maxSize     int64
	maxResponse int64
	maxEntries  int
	now         func() int64

	mu     sync.Mutex
	m      map[string]*entry
	lru    entry // sentinel: lru.next is the most recently used, lru.prev the least
	size   int64
	sweeps int
}

// New returns an empty cache.
func New(o Options) *Cache {
	c := &Cache{maxSize: o.MaxSize, maxResponse: o.MaxResponseSize, maxEntries: o.MaxEntries, now: o.Now, m: map[string]*entry{}}
	if c.maxEntries <= 0 {
		c.maxEntries = max(1, int(o.MaxSize/bytesPerEntry))
	}
	if c.now == nil {
		c.now = func() int64 { return time.Now().UnixMilli() }
	}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// App is one queue's part of the cache: its entries belong to it, and its counters
// are what `httpsys ls` shows as the app's `cache`.
type App struct {
	epoch atomic.Uint64 // its instances' generation (Invalidate)

	hits, misses, stores, evictions atomic.Uint64
	entries, bytes                  atomic.Int64
}

// NewApp returns a queue's part of c.
func (c *Cache) NewApp() *App { return &App{} }

// Epoch is the app's instance generation now: a request records it when it goes to a
// worker, and its response is stored only if no instance attached or left since.
func (a *App) Epoch() uint64 { return a.epoch.Load() }

// Stats are an app's counters (queueStats' `cache`, docs/output-cache.md "Observing it").
type Stats struct {
	Hits      uint64 `json:"hits"`
	Misses    uint64 `json:"misses"`
	Stores    uint64 `json:"stores"`
	Evictions uint64 `json:"evictions"`
	Entries   int64  `json:"entries"`
	Bytes     int64  `json:"bytes"`
}

// Stats reads a's counters.
func (a *App) Stats() Stats {
	return Stats{Hits: a.hits.Load(), Misses: a.misses.Load(), Stores: a.stores.Load(), Evictions: a.evictions.Load(), Entries: a.entries.Load(), Bytes: a.bytes.Load()}
}

// entry is a stored response. Only its list links change once it is stored (under the
// cache's lock); the rest is read by hits without it.
type entry struct {
	prev, next *entry
	key        string
	app        *App
	stored     int64 // ms
	expires    int64 // ms
	size       int64
	shared     bool // the response said Cache-Control: public

	// "HTTP/1.1 200 <reason>\r\n<lines>Content-Length: <n>\r\nAge: ": the full answer's
	// head up to its Age; lines are head[linesAt:linesEnd]
	head              []byte
	linesAt, linesEnd int
	body              []byte
	etag, modified    []byte // nil when the response had none
}

func (e *entry) lines() []byte { return e.head[e.linesAt:e.linesEnd] }

// AppendKey appends the key of a request (docs/output-cache.md "Keys, memory and
// invalidation"): its scheme and listener port, its Host in lower case with the port
// the app sees in it, and its canonical target. Space-separated: the target has no space (VCHAR), so the Host
// between the port and it cannot be mistaken.
func AppendKey(dst []byte, secure bool, port int, host, target string) []byte {
	if secure {
		dst = append(dst, "https "...)
	} else {
		dst = append(dst, "http "...)
	}
	dst = strconv.AppendInt(dst, int64(port), 10)
	dst = append(dst, ' ')
	at := len(dst)
	dst = append(dst, host...)
	for i := at; i < len(dst); i++ {
		if c := dst[i]; c >= 'A' && c <= 'Z' {
			dst[i] = c | 0x20
		}
	}
	dst = append(dst, ' ')
	return append(dst, target...)
}

// get is the live entry for key, made the most recently used; an expired one is
// dropped (it is not an eviction). Under the lock.
func (c *Cache) get(key []byte, now int64) *entry {
	e := c.m[string(key)]
	if e == nil {
		return nil
	}
	if now > e.expires {
		c.remove(e)
		return nil
	}
	c.unlink(e)
	c.pushFront(e)
	return e
}

func (c *Cache) unlink(e *entry) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
}

func (c *Cache) pushFront(e *entry) {
	e.prev = &c.lru
	e.next = c.lru.next
	e.next.prev = e
	c.lru.next = e
}

// remove drops e from the map, the list and its app's counters. Under the lock.
func (c *Cache) remove(e *entry) {
	c.unlink(e)
	delete(c.m, e.key)
	c.size -= e.size
	e.app.entries.Add(-1)
	e.app.bytes.Add(-e.size)
}

// evict drops the least recently used entry, counted as its app's eviction.
func (c *Cache) evict() {
	e := c.lru.prev
	if e == &c.lru {
		return
	}
	c.remove(e)
	e.app.evictions.Add(1)
}

// put stores e under its key, in place of an entry the key had, making room for it.
// Under the lock.
func (c *Cache) put(e *entry) {
	// the least recently used entry makes room for a new key (counted an eviction); an
	// expired entry of the key counts as no entry, as lru-cache's has() says
	if old := c.m[e.key]; (old == nil || c.now() > old.expires) && len(c.m) >= c.maxEntries {
		c.evict()
	}
	if old := c.m[e.key]; old != nil {
		c.remove(old)
	}
	c.m[e.key] = e
	c.pushFront(e)
	c.size += e.size
	for c.size > c.maxSize && c.lru.prev != e {
		c.evict()
	}
	e.app.entries.Add(1)
	e.app.bytes.Add(e.size)
	e.app.stores.Add(1)
}

// Invalidate empties a's entries: one of its instances attached or left (a start,
// restart, reload or crash: a new build is never answered by the old one's responses),
// or its queue went. Responses on their way to the cache are not stored.
func (c *Cache) Invalidate(a *App) {
	// (no shortcut on a's count of entries: a Commit that saw the old generation under
	// the lock may be storing now, and is waited for here)
	a.epoch.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.next; e != &c.lru; {
		next := e.next
		if e.app == a {
			c.remove(e)
		}
		e = next
	}
}

// Sweep runs on each clock tick: every purgeEvery ticks, expired entries are dropped
// (their bytes are freed before the LRU would reach them).
func (c *Cache) Sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweeps++
	if c.sweeps%purgeEvery != 0 {
		return
	}
	now := c.now()
	for e := c.lru.next; e != &c.lru; {
		next := e.next
		if now > e.expires {
			c.remove(e)
		}
		e = next
	}
}

// Len is how many entries the cache holds, and their bytes as counted (tests).
func (c *Cache) Len() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.size
}
