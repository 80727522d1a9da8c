// Package hub is the router's core: the named queues and the URL
// prefixes they registered, the listeners their ports need, the worker socket, and
// the admission of workers. The client side is internal/conn, the worker side
// internal/attach; the supervisor drives a Hub through the control channel
// (commands.go, docs/router-control.md).
package hub

import (
	"crypto/subtle"
	"errors"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/cache"
	"httpsys/router/internal/clock"
	"httpsys/router/internal/coded"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/h2"
	"httpsys/router/internal/listen"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/route"
)

// Limits are the router's limits and timeouts, in bytes and ms (the start command's
// `limits`, docs/router-control.md; the supervisor maps the config's limits to them:
// src/supervisor/router-config.js configLimits).
type Limits struct {
	MaxHeaderSize    int   `json:"maxHeaderSize"`
	MaxBodySize      int64 `json:"maxBodySize"` // 0: no limit
	QueueLength      int   `json:"queueLength"`
	QueueTimeout     int64 `json:"queueTimeout"`
	KeepAliveTimeout int64 `json:"keepAliveTimeout"`
	HeadersTimeout   int64 `json:"headersTimeout"`
	BodyTimeout      int64 `json:"bodyTimeout"`
	DrainTimeout     int64 `json:"drainTimeout"`
	MaxConnections   int   `json:"maxConnections"`
	CloseTimeout     int64 `json:"closeTimeout"`
	FinGrace         int64 `json:"finGrace"`
	// the output cache (internal/cache): bytes for every app's entries (0: off), and
	// the largest response body stored
	CacheSize        int64 `json:"cacheSize"`
	CacheMaxResponse int64 `json:"cacheMaxResponse"`
}

// DefaultLimits are the limits where start sets none (kept from the JS router; a test
// holds them to the config schema's).
func DefaultLimits() Limits {
	return Limits{
		MaxHeaderSize: 16384, MaxBodySize: 100 << 20, QueueLength: 1000, QueueTimeout: 120000,
		KeepAliveTimeout: 5000, HeadersTimeout: 60000, BodyTimeout: 120000, DrainTimeout: 120000,
		CloseTimeout: 5000, FinGrace: 100,
		CacheSize: cache.DefaultMaxSize, CacheMaxResponse: cache.DefaultMaxResponseSize,
	}
}

// maxHeaderSizeLimit: every REQUEST string travels with a u16 length.
const maxHeaderSizeLimit = 65535

// Events is where the router's events go (the control channel).
type Events interface {
	Event(name string, fields any)
}

// Hub is one router.
type Hub struct {
	log    *slog.Logger
	events Events
	clock  *clock.Clock
	table  route.Table

	limits           Limits
	workersMayCreate bool
	splice           bool // SpliceBodies (splice.go)
	socketPath       string
	conns            *conn.Server
	cache            *cache.Cache // nil when cacheSize is 0
	listeners        *listen.Listeners
	wl               net.Listener

	mu        sync.Mutex // queues, workers, admission
	started   bool
	closing   bool
	queues    map[string]*entry
	workers   map[*attach.Worker]struct{}
	workerSeq uint64
	anonSeq   uint64

	tls       tlsState                // tls.go
	startedCh chan struct{}           // closed by Start (standalone.go waits for it)
	bound     map[string]net.Listener // bind.go: a standalone server's port, bound before its queue
}

// entry is a queue and what the router knows of it besides its requests.
type entry struct {
	q      *queue.Queue
	urls   []string // as bound (port 0 resolved)
	ports  []int    // each prefix's port
	ips    []string // each prefix's address when IP-bound, else ""
	token  string   // a worker must present it to attach
	owner  *attach.Worker
	claim  string // the prefixes the first worker asked for, when the queue had none
	cache  bool
	unbind bool
	// a standalone app's listen() (adopt.go): its first worker owns it
	reserved bool
	fixed    *fixed // a standalone server served by no port of ours (fixed.go)
}

// New returns a Hub that is not started.
func New(log *slog.Logger, events Events, c *clock.Clock) *Hub {
	return &Hub{log: log, events: events, clock: c, queues: map[string]*entry{}, workers: map[*attach.Worker]struct{}{}, startedCh: make(chan struct{})}
}

// StartOptions are the start command's arguments.
type StartOptions struct {
	WorkerSocket     string
	WorkersMayCreate bool
	Limits           Limits
}

// Start listens for workers at the worker socket (a stale socket file is removed
// first; the socket is the owner's only: another user must not attach to a queue).
func (h *Hub) Start(o StartOptions) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return coded.New(coded.BadArgument, "the router is started already", nil)
	}
	l := o.Limits
	if l.MaxHeaderSize <= 0 || l.MaxHeaderSize > maxHeaderSizeLimit {
		return coded.New(coded.BadArgument, "maxHeaderSize must be between 1 and 65535", map[string]any{"name": "maxHeaderSize", "value": l.MaxHeaderSize, "reason": "must be between 1 and 65535"})
	}
	for name, v := range map[string]int64{"queueTimeout": l.QueueTimeout, "keepAliveTimeout": l.KeepAliveTimeout, "headersTimeout": l.HeadersTimeout, "bodyTimeout": l.BodyTimeout, "drainTimeout": l.DrainTimeout} {
		if v < 0 {
			return coded.New(coded.BadArgument, name+" must be 0 or more", map[string]any{"name": name, "value": v, "reason": "must be a number of milliseconds, 0 or more (0 turns the timeout off)"})
		}
	}
	if o.WorkerSocket == "" {
		return coded.New(coded.BadArgument, "workerSocket is required", map[string]any{"name": "workerSocket", "value": "", "reason": "must be a non-empty path"})
	}
	h.limits = l
	h.workersMayCreate = o.WorkersMayCreate
	h.socketPath = o.WorkerSocket
	h.conns = conn.NewServer(&h.table, h.clock, h.log, conn.Limits{
		MaxHeaderSize: l.MaxHeaderSize, MaxBodySize: l.MaxBodySize, HeadersTimeout: l.HeadersTimeout,
		KeepAliveTimeout: l.KeepAliveTimeout, BodyTimeout: l.BodyTimeout, DrainTimeout: l.DrainTimeout, FinGrace: l.FinGrace,
	})
	if l.CacheSize > 0 {
		h.cache = cache.New(cache.Options{MaxSize: l.CacheSize, MaxResponseSize: l.CacheMaxResponse})
		h.conns.Cache = h.cache
	}
	h.conns.ServeH2 = h2.New(h.conns).ServeSecure
	h.listeners = listen.New(h.log, l.MaxConnections, h.conns.Serve, h.conns.PortClosed)
	h.startTLS()
	if runtime.GOOS != "windows" {
		if err := os.Remove(o.WorkerSocket); err != nil && !errors.Is(err, os.ErrNotExist) {
			return coded.New(coded.Failed, err.Error(), nil)
		}
	}
	wl, err := listenPrivate(o.WorkerSocket)
	if err != nil {
		return coded.New(coded.Failed, "cannot listen for workers at "+o.WorkerSocket+": "+err.Error(), nil)
	}
	h.wl = wl
	h.started = true
	close(h.startedCh)
	h.clock.Every(h.sweep)
	go h.acceptWorkers(wl)
	h.log.Debug("router started", "socketPath", o.WorkerSocket)
	return nil
}

func (h *Hub) acceptWorkers(wl net.Listener) {
	for {
		c, err := wl.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			h.log.Error("worker socket error", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		h.mu.Lock()
		if h.closing {
			h.mu.Unlock()
			_ = c.Close()
			continue
		}
		h.workerSeq++
		w := attach.New(h.workerSeq, c, h, h.log)
		w.SpliceBodies = h.splice
		h.workers[w] = struct{}{}
		h.mu.Unlock()
		go w.Serve()
	}
}

// ---- queues ----------------------------------------------------------------------

// QueueOptions are createQueue's arguments besides the name.
type QueueOptions struct {
	URLs         []string `json:"urls"`
	Token        string   `json:"token"`
	QueueLength  *int     `json:"queueLength"`
	QueueTimeout *int64   `json:"queueTimeout"`
	MaxBodySize  *int64   `json:"maxBodySize"`
	Cache        *bool    `json:"cache"`
}

// QueueInfo is a queue as bound: createQueue's answer.
type QueueInfo struct {
	Name  string   `json:"name"`
	URLs  []string `json:"urls"`
	Ports []int    `json:"ports"`
}

// CreateQueue creates a named queue and registers its prefixes (binding their ports).
func (h *Hub) CreateQueue(name string, o QueueOptions) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return QueueInfo{}, err
	}
	e, err := h.makeQueue(name, o, nil)
	if err != nil {
		return QueueInfo{}, err
	}
	h.log.Debug("queue created", "queue", name, "urls", e.urls)
	return e.info(), nil
}

func (h *Hub) usable() error {
	if !h.started {
		return coded.New(coded.BadArgument, "the router is not started: send start first", nil)
	}
	if h.closing {
		return coded.New(coded.QueueClosed, "the router is closing", map[string]any{})
	}
	return nil
}

// makeQueue, under the lock.
func (h *Hub) makeQueue(name string, o QueueOptions, owner *attach.Worker) (*entry, error) {
	if name == "" {
		return nil, coded.New(coded.BadArgument, "a queue needs a name", map[string]any{"name": "name", "value": name, "reason": "must be a non-empty string"})
	}
	if _, ok := h.queues[name]; ok {
		return nil, coded.New(coded.QueueExists, "a queue named "+strconv.Quote(name)+" exists", map[string]any{"queue": name})
	}
	s := queue.Settings{Length: h.limits.QueueLength, TimeoutMs: h.limits.QueueTimeout, MaxBodySize: h.limits.MaxBodySize}
	if o.QueueLength != nil {
		s.Length = *o.QueueLength
	}
	if o.QueueTimeout != nil {
		s.TimeoutMs = *o.QueueTimeout
	}
	if o.MaxBodySize != nil {
		s.MaxBodySize = *o.MaxBodySize
	}
	e := &entry{q: queue.New(name, s), token: o.Token, owner: owner, cache: o.Cache == nil || *o.Cache}
	if e.cache && h.cache != nil {
		e.q.Cache = h.cache.NewApp()
	}
	h.queues[name] = e
	if err := h.registerURLs(e, o.URLs); err != nil {
		delete(h.queues, name)
		return nil, err
	}
	return e, nil
}

func (e *entry) info() QueueInfo {
	return QueueInfo{Name: e.q.Name, URLs: append([]string{}, e.urls...), Ports: e.distinctPorts()}
}

func (e *entry) distinctPorts() []int {
	out := []int{}
	for _, p := range e.ports {
		seen := false
		for _, x := range out {
			seen = seen || x == p
		}
		if !seen {
			out = append(out, p)
		}
	}
	return out
}

// registerURLs routes e's new prefixes and binds their ports; conflicts are found
// before anything binds, and a failure undoes everything it did. Under the lock.
func (h *Hub) registerURLs(e *entry, urls []string) error {
	var parsed []route.Prefix
	for _, u := range urls {
		p, err := route.Parse(u, true)
		if err != nil {
			return badPrefix(u, err)
		}
		dup := false
		if p.Port != 0 {
			for _, x := range e.urls {
				dup = dup || x == p.Prefix
			}
			for _, x := range parsed {
				dup = dup || x.Prefix == p.Prefix
			}
		}
		if !dup {
			parsed = append(parsed, p)
		}
	}
	type bound struct {
		p    route.Prefix
		port int
	}
	var routed []route.Prefix
	var acquired []bound
	undo := func() {
		for _, p := range routed {
			h.table.Remove(p)
		}
		for _, b := range acquired {
			h.listeners.Release(b.port, b.p.IP)
		}
	}
	// conflicts first: a conflicting prefix must not bind anything
	for _, p := range parsed {
		if p.Port == 0 {
			continue
		}
		if err := h.table.Add(p, e.q); err != nil {
			undo()
			return conflict(err)
		}
		routed = append(routed, p)
	}
	// in the order given (a caller reads ports[0] as the first
	// prefix's): fixed ports are bound first, port 0 after, each in its own place
	done := make([]bound, len(parsed))
	for i, p := range parsed {
		if p.Port == 0 {
			continue
		}
		if err := h.listeners.Acquire(p.Port, p.IP, p.Scheme == "https", p.Prefix); err != nil {
			undo()
			return err
		}
		acquired = append(acquired, bound{p, p.Port})
		done[i] = bound{p, p.Port}
	}
	for i, p := range parsed {
		if p.Port != 0 {
			continue
		}
		port, err := h.listeners.AcquireFree(p.IP, p.Scheme == "https")
		if err != nil {
			undo()
			return err
		}
		acquired = append(acquired, bound{p, port})
		q, err := route.Parse(p.Scheme+"://"+p.Host+":"+strconv.Itoa(port)+p.Path, false)
		if err == nil {
			err = h.table.Add(q, e.q)
		}
		if err != nil {
			undo()
			return conflict(err)
		}
		routed = append(routed, q)
		done[i] = bound{q, port}
	}
	for _, b := range done {
		e.urls = append(e.urls, b.p.Prefix)
		e.ports = append(e.ports, b.port)
		e.ips = append(e.ips, b.p.IP)
	}
	return nil
}

func badPrefix(u string, err error) error {
	var pe *route.Error
	if errors.As(err, &pe) {
		return coded.New(coded.BadPrefix, pe.Error(), map[string]any{"prefix": pe.Prefix, "reason": pe.Reason})
	}
	return coded.New(coded.BadPrefix, err.Error(), map[string]any{"prefix": u, "reason": err.Error()})
}

func conflict(err error) error {
	var ce *route.ConflictError
	if errors.As(err, &ce) {
		d := map[string]any{"prefix": ce.Prefix}
		if ce.Owner != nil {
			if q, ok := ce.Owner.(*queue.Queue); ok {
				d["owner"] = q.Name
			}
		}
		return coded.New(coded.URLConflict, ce.Error(), d)
	}
	return badPrefix("", err)
}

// DeleteQueue removes a queue: waiting requests get 503, attached workers are closed.
func (h *Hub) DeleteQueue(name string) error {
	h.mu.Lock()
	e, ok := h.queues[name]
	if !ok {
		h.mu.Unlock()
		return notFound(name)
	}
	h.removeQueue(e)
	h.mu.Unlock()
	return nil
}

func notFound(name string) error {
	return coded.New(coded.QueueNotFound, "no queue named "+strconv.Quote(name), map[string]any{"queue": name})
}

// removeQueue, under the lock.
func (h *Hub) removeQueue(e *entry) {
	if h.queues[e.q.Name] == e {
		delete(h.queues, e.q.Name)
	}
	h.unroute(e)
	h.forgetTLS(e.q.Name)
	h.invalidateCache(e.q)
	waiting, workers := e.q.Delete()
	for _, r := range waiting {
		conn.QueueGone(r, false)
	}
	for _, w := range workers {
		w.(*attach.Worker).CloseByHub("queue deleted")
	}
	h.log.Debug("queue deleted", "queue", e.q.Name)
}

// unroute: e's prefixes leave the routing table and their ports.
func (h *Hub) unroute(e *entry) {
	if e.unbind {
		return
	}
	e.unbind = true
	h.unfix(e)
	for i, u := range e.urls {
		if p, err := route.Parse(u, false); err == nil {
			h.table.Remove(p)
		}
		h.listeners.Release(e.ports[i], e.ips[i])
	}
}

// SetQueueAvailable: whether the app behind a queue can serve again by itself. While
// it cannot, its requests get 503 at once instead of waiting for the queue timeout; an
// attaching worker makes it available again.
func (h *Hub) SetQueueAvailable(name string, available bool) error {
	h.mu.Lock()
	e, ok := h.queues[name]
	h.mu.Unlock()
	if !ok {
		return notFound(name)
	}
	for _, r := range e.q.SetAvailable(available) {
		conn.AppDown(r)
	}
	return nil
}

// WorkerStats is a worker's line in QueueStats.
type WorkerStats = attach.Stats

// QueueStats is queueStats's answer (docs/router-control.md).
type QueueStats struct {
	Name     string        `json:"name"`
	URLs     []string      `json:"urls"`
	Waiting  int           `json:"waiting"`
	InFlight int           `json:"inFlight"`
	Served   uint64        `json:"served"`
	Workers  []WorkerStats `json:"workers"`
	Cache    any           `json:"cache"`
}

// QueueStats reads a queue's counters.
func (h *Hub) QueueStats(name string) (QueueStats, error) {
	h.mu.Lock()
	e, ok := h.queues[name]
	var urls []string
	if ok {
		urls = append([]string{}, e.urls...)
	}
	h.mu.Unlock()
	if !ok {
		return QueueStats{}, notFound(name)
	}
	return statsOf(e.q, urls), nil
}

func statsOf(q *queue.Queue, urls []string) QueueStats {
	s := q.Stats()
	out := QueueStats{Name: q.Name, URLs: urls, Waiting: s.Waiting, Served: s.Served, Workers: []WorkerStats{}}
	if q.Cache != nil {
		cs := q.Cache.Stats()
		out.Cache = &cs
	}
	for _, w := range q.Workers() {
		ws := w.(*attach.Worker).Stats()
		out.InFlight += ws.InFlight
		out.Workers = append(out.Workers, ws)
	}
	return out
}

// Stats is the stats command's answer: every queue and the client connections.
type Stats struct {
	Connections int          `json:"connections"`
	Queues      []QueueStats `json:"queues"`
}

// Stats reads every queue's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	names := make([]string, 0, len(h.queues))
	for n := range h.queues {
		names = append(names, n)
	}
	h.mu.Unlock()
	sort.Strings(names)
	out := Stats{Queues: []QueueStats{}}
	if h.conns != nil {
		out.Connections = h.conns.Count()
	}
	for _, n := range names {
		if s, err := h.QueueStats(n); err == nil {
			out.Queues = append(out.Queues, s)
		}
	}
	return out
}

func (h *Hub) sweep(now int64) {
	h.conns.Sweep(now)
	if h.cache != nil {
		h.cache.Sweep()
	}
	h.mu.Lock()
	qs := make([]*queue.Queue, 0, len(h.queues))
	for _, e := range h.queues {
		qs = append(qs, e.q)
	}
	h.mu.Unlock()
	for _, q := range qs {
		expired := q.Expire(now, clock.Tick.Milliseconds())
		if len(expired) == 0 {
			continue
		}
		h.log.Debug("requests waited longer than queueTimeout", "queue", q.Name, "requests", len(expired))
		for _, r := range expired {
			conn.QueueTimeout(r)
		}
	}
}

// ---- workers (attach.Hub) ---------------------------------------------------------

// Hello admits a worker, so that a process that reaches the
// worker socket cannot take another app's requests or URL space: a queue made with a
// token admits only a worker presenting it (the app's workers get it at spawn); a
// worker registers prefixes only on a queue that has none (an app without urls: its
// first instance's listen() decides, and later instances must ask for the same); and
// where workers may not create queues (a supervisor's router) none does.
func (h *Hub) Hello(w *attach.Worker, hello *attach.Hello) (*queue.Queue, attach.Welcome, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	name := hello.Queue
	var urls []string
	for _, u := range hello.URLs {
		if u != "" {
			urls = append(urls, u)
		}
	}
	pid := hello.PID
	if h.closing {
		return nil, attach.Welcome{}, coded.New(coded.QueueClosed, "the router is closing", map[string]any{"queue": name})
	}
	var e *entry
	if name != "" {
		e = h.queues[name]
		if e == nil {
			if !h.workersMayCreate || len(urls) == 0 {
				return nil, attach.Welcome{}, notFound(name)
			}
			var err error
			if e, err = h.makeQueue(name, QueueOptions{URLs: urls}, w); err != nil {
				return nil, attach.Welcome{}, err
			}
			e.claim = claimKey(urls)
		} else {
			if e.token != "" && subtle.ConstantTimeCompare([]byte(e.token), []byte(hello.Token)) != 1 {
				return nil, attach.Welcome{}, h.denied(name, pid, "it did not present the token its app's workers get at spawn")
			}
			if e.reserved && e.owner == nil {
				e.owner = w
			}
			switch {
			case len(e.urls) == 0 && len(urls) > 0:
				if err := h.registerURLs(e, urls); err != nil {
					return nil, attach.Welcome{}, err
				}
				e.claim = claimKey(urls)
			case len(urls) > 0 && e.claim != "" && e.claim != claimKey(urls) && claimKey(e.urls) != claimKey(urls):
				return nil, attach.Welcome{}, h.denied(name, pid, "its app is bound to "+strings.Join(e.urls, " ")+" by its first instance, and this process asked for "+strings.Join(urls, " "))
			case len(urls) > 0:
				h.log.Debug("queue has prefixes already; the worker's are ignored", "queue", name, "urls", urls, "pid", pid)
			}
		}
	} else {
		if !h.workersMayCreate {
			return nil, attach.Welcome{}, h.denied("(none)", pid, "this router serves only the queues its supervisor made")
		}
		if len(urls) == 0 {
			return nil, attach.Welcome{}, notFound("(none)")
		}
		h.anonSeq++
		var err error
		if e, err = h.makeQueue("~"+strconv.Itoa(pid)+"."+strconv.FormatUint(h.anonSeq, 10), QueueOptions{URLs: urls}, w); err != nil {
			return nil, attach.Welcome{}, err
		}
	}
	if err := h.applyAppTLS(e, hello.TLS); err != nil {
		if e.owner == w {
			h.removeQueue(e) // made by this HELLO: it goes with the refusal
		}
		return nil, attach.Welcome{}, err
	}
	// a new instance may be a new build: emptied before it takes a request
	h.invalidateCache(e.q)
	return e.q, attach.Welcome{Queue: e.q.Name, URLs: append([]string{}, e.urls...), Ports: e.distinctPorts()}, nil
}

func (h *Hub) denied(name string, pid int, reason string) error {
	h.log.Warn("refused a worker (pid "+strconv.Itoa(pid)+") for queue "+name+": "+reason, "queue", name, "pid", pid, "reason", reason)
	return coded.New(coded.AttachDenied, reason, map[string]any{"queue": name, "pid": pid, "reason": reason})
}

// claimKey is what a worker asked to register, comparable across instances (port 0
// stays 0).
func claimKey(urls []string) string {
	keys := make([]string, len(urls))
	for i, u := range urls {
		if p, err := route.Parse(u, true); err == nil {
			keys[i] = p.Prefix
		} else {
			keys[i] = u
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

// Attached: the worker acknowledged HELLO_OK (its first ACK); the supervisor hears of
// it (a worker is ready when it attaches: docs/architecture.md 8.2).
func (h *Hub) Attached(w *attach.Worker) {
	q := w.Queue()
	h.mu.Lock()
	var urls []string
	if e := h.queues[q.Name]; e != nil {
		urls = append([]string{}, e.urls...)
	}
	h.mu.Unlock()
	h.log.Debug("worker attached", "queue", q.Name, "pid", w.PID(), "workerId", w.ID)
	// a standalone server's connections accepted before it attached (conn/owned_conn.go)
	h.conns.Announce(q)
	h.events.Event("attach", map[string]any{"queue": q.Name, "pid": w.PID(), "workerId": w.ID, "urls": urls})
}

// Detached: the worker asked for no new requests, or left.
func (h *Hub) Detached(w *attach.Worker, reason string) {
	h.events.Event("detach", map[string]any{"queue": w.Queue().Name, "pid": w.PID(), "workerId": w.ID, "reason": reason})
}

// Closed: the worker's connection is gone; a queue it made for itself goes with it.
func (h *Hub) Closed(w *attach.Worker) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.workers, w)
	if q := w.Queue(); q != nil {
		h.invalidateCache(q)
		if e := h.queues[q.Name]; e != nil && e.q == q && e.owner == w {
			h.removeQueue(e)
		}
	}
}

// EndConnection: a worker's CONN_END.
func (h *Hub) EndConnection(w *attach.Worker, id uint32) {
	h.conns.EndConnection(w, id)
}

// ---- the end ----------------------------------------------------------------------

// Close stops listening, answers what is in flight (within closeTimeout), closes the
// workers' connections and removes the socket file.
func (h *Hub) Close() {
	h.mu.Lock()
	if !h.started || h.closing {
		h.mu.Unlock()
		return
	}
	h.closing = true
	h.listeners.CloseAll()
	h.closeBound()
	entries := make([]*entry, 0, len(h.queues))
	for _, e := range h.queues {
		entries = append(entries, e)
	}
	h.mu.Unlock()
	for _, e := range entries {
		for _, r := range e.q.TakeWaiting() {
			conn.QueueGone(r, true)
		}
	}
	h.conns.Shutdown(time.Duration(h.limits.CloseTimeout) * time.Millisecond)
	h.mu.Lock()
	for _, e := range entries {
		h.removeQueue(e)
	}
	workers := make([]*attach.Worker, 0, len(h.workers))
	for w := range h.workers {
		workers = append(workers, w)
	}
	h.mu.Unlock()
	for _, w := range workers {
		w.CloseByHub("router closing")
	}
	deadline := time.After(time.Second)
	for _, w := range workers {
		select {
		case <-w.Done():
		case <-deadline:
			w.Destroy()
			<-w.Done()
		}
	}
	_ = h.wl.Close()
	if runtime.GOOS != "windows" {
		_ = os.Remove(h.socketPath)
	}
	h.log.Debug("router closed")
}

// invalidateCache empties a queue's output cache entries: an instance attached or left
// (a start, restart, reload or crash), or the queue went. Responses on their way to
// the cache are not stored.
func (h *Hub) invalidateCache(q *queue.Queue) {
	if h.cache != nil && q.Cache != nil {
		h.cache.Invalidate(q.Cache)
	}
}

// Abandon is the supervisor gone: the socket file goes, and the process exits.
func (h *Hub) Abandon() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started && runtime.GOOS != "windows" {
		_ = os.Remove(h.socketPath)
	}
}

func pid() int { return os.Getpid() }
