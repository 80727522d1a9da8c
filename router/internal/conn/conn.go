package conn

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/parse"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/route"
	"httpsys/router/internal/upload"
	"httpsys/router/internal/wire"
)

const (
	// maxPipeline: requests parsed ahead of their responses on one connection before
	// reading stops
	maxPipeline = 32
	// heldBudget: response bytes one connection may make the router hold. A response
	// waiting behind an earlier one (pipelining) is held here, and its worker may send
	// a whole response window before any credit comes back: so a request waiting in
	// line is charged a window (or what it holds, when more) from the moment it is
	// parsed, a finished one what it holds, and the bytes queued for the socket count
	// too. Past the budget no further request head is read until the client takes
	// bytes (README "The router's rules": 1 MiB, a waiting response counts a window).
	heldBudget = 4 * wire.ResponseWindow
	readSize   = 32 << 10
	lingerMs   = 5000
	// a write buffer larger than this is not kept for the next response
	keepBuffer = 256 << 10
)

// Why reading is paused (a mask).
const (
	pauseBody     = 1 // a request body outran its worker's credit
	pausePipeline = 2 // maxPipeline requests in flight
	pauseHeld     = 4 // the held budget is spent
	// an upgrade request was read: nothing after it is parsed until its answer says
	// whether the connection switches protocols (then the bytes are the tunnel's)
	pauseUpgrade = 8
)

// What the connection's one deadline means (HTTP_TIMEOUT_LIMIT_INFO has HTTP.SYS's
// timers); the clock's sweep checks it, no timer per connection or request.
const (
	phaseIdle    = iota // between requests: keepAliveTimeout (IdleConnection)
	phaseHeaders        // a head is awaited or arriving: headersTimeout (HeaderWait)
	// requests in flight: while a body arrives and the router reads it, each chunk
	// gives the client another bodyTimeout (EntityBody); otherwise no deadline
	phaseActive
	phaseEnding // our FIN is queued or sent; destroy if the peer lingers
	// every response is out, the rest of a body nobody reads is being discarded:
	// drainTimeout in all (DrainEntityBody)
	phaseDrain
	// upgraded (tunnel.go): no deadline; the app's protocol has its own (WebSocket pings)
	phaseTunnel
)

type ackEntry struct {
	r *Request
	n int
}

// Conn is one client connection.
type Conn struct {
	srv        *Server
	nc         net.Conn
	id         uint32
	port       int
	localAddr  string
	remoteAddr string
	remotePort uint16
	family     uint8
	release    func() // the listener's count of open connections
	deadline   atomic.Int64

	mu    sync.Mutex
	rcond sync.Cond // the reader waits here while paused
	wcond sync.Cond // the writer waits here for bytes

	parser       *parse.Parser
	first, last  *Request
	pending      int
	unsafeInLine int
	deferred     int
	current      *Request // the request whose body is being parsed
	held         int
	pauseMask    int
	inData       bool // the reader is inside onData
	leftover     bool // ... holding unparsed bytes
	stopped      bool // no more requests are read
	closing      bool // answer what is in flight with Connection: close, then end
	endWhenIdle  bool
	readEnded    bool
	ending       bool // end the socket once what is queued is written
	finSent      bool
	clientDone   bool // its last request said it sends nothing more (closeNow, writer.go)
	dead         bool
	phase        int
	finTimer     *time.Timer
	seen         []*attach.Worker // the workers its requests went to (CONN_CLOSED)
	lim          *Limits          // its rules: the router's, or its port's owner's (owned.go)
	own          *ownedPort       // the standalone server that owns its port, or nil
	connFinSent  bool             // CONN_FIN went to its workers (an owned port)
	rest         []byte           // the unparsed rest of the read being parsed (an upgrade's head bytes)
	tunnel       *Request         // after a 101: the upgrade request whose tunnel owns the bytes
	skip         int              // bytes of rest the worker had as the upgrade's head (tunnel.go)
	batchW       *attach.Worker   // set during a worker frame's call: kick defers to its read's end
	batched      bool             // ... and this connection is on that worker's list (FlushBatch)
	sec          *Secure          // a TLS connection's session; nil: plain
	tlsHost      string           // the last Host found not misdirected (secureChecks)
	ownedConn                     // an owned port's: what its worker decides (owned_conn.go)

	out       []byte // bytes for the socket, in order
	acks      []ackEntry
	spare     []byte
	spareAcks []ackEntry
	writing   int // bytes the writer is writing now

	writerUp  bool        // its writer goroutine runs (writer.go)
	raw       *rawWriter  // its socket's non-blocking write (trywrite_unix.go)
	spareHeld heldRing    // a finished request's ring of held body bytes, for the next (held.go)
	readBlk   *wire.Block // the block onData's bytes are in, if any (blocks.go)
}

func newConn(s *Server, nc net.Conn, id uint32, port int, dual bool, release func(), fixed *ownedPort) *Conn {
	c := &Conn{srv: s, nc: nc, id: id, port: port, release: release, family: 4}
	c.rcond.L = &c.mu
	c.wcond.L = &c.mu
	if a, ok := nc.LocalAddr().(*net.TCPAddr); ok {
		c.localAddr = addrText(a.IP, dual)
	}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		c.remoteAddr = addrText(a.IP, dual)
		c.remotePort = uint16(a.Port)
		if dual || a.IP.To4() == nil {
			c.family = 6
		}
	}
	l, own := s.limitsFor(port)
	if fixed != nil {
		l, own = &fixed.limits, fixed
	}
	c.lim, c.own = l, own
	// (a standalone server's own port takes any Host value, as node's server does; an
	// HTTP/1.1 request without one is the worker's to refuse, after 'upgrade' took its
	// requests, as its requireHostHeader says: it knows the connection, CONN_OPEN)
	c.parser = parse.New(parse.Options{MaxHeaderSize: l.MaxHeaderSize, MaxBodySize: parse.NoBodyLimit, RequireHost: own == nil, StrictHost: own == nil, Connect: own != nil, Lenient: own != nil && own.lenient})
	c.phase = phaseHeaders
	c.deadline.Store(s.Clock.After(l.HeadersTimeout))
	return c
}

// addrText is an address as node prints socket.remoteAddress: IPv4 dotted, IPv6 in
// RFC 5952 text, and an IPv4 client of a dual-stack listener (every address) as
// ::ffff:a.b.c.d, as node's sockets on '::' say it (Go prints it as IPv4).
func addrText(ip net.IP, dual bool) string {
	if dual && ip.To4() != nil {
		return "::ffff:" + ip.To4().String()
	}
	return ip.String()
}

// ---- reading -------------------------------------------------------------------

func (c *Conn) serve() {
	small := c.srv.readBuffer()
	var blk *wire.Block
	defer func() {
		c.srv.buffers.Put(small)
		if blk != nil {
			blk.Release()
		}
	}()
	for {
		buf := *small
		if blk != nil {
			buf = blk.B
		}
		n, err := c.nc.Read(buf)
		if n > 0 && !c.onData(buf[:n], blk) {
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.onEnd()
			} else {
				c.destroy()
			}
			return
		}
		blk = c.srv.nextBlock(blk, n)
	}
}

// onData parses what arrived (in blk, when not nil); false when the connection is dead.
func (c *Conn) onData(data []byte, blk *wire.Block) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readBlk = blk
	defer func() { c.readBlk = nil }()
	if c.dead {
		return false
	}
	if c.tunnel != nil {
		return c.tunnelData(data)
	}
	if c.stopped {
		if c.errWait {
			c.ownClientErrorAgain(data)
		}
		return true
	}
	l := c.lim
	if c.phase == phaseIdle {
		c.phase = phaseHeaders
		c.deadline.Store(c.srv.Clock.After(l.HeadersTimeout))
	} else if c.current != nil && c.phase == phaseActive && c.pauseMask == 0 {
		c.deadline.Store(c.srv.Clock.After(l.BodyTimeout))
	}
	if c.current == nil {
		c.checkHeld()
	}
	c.inData = true
	held := c.holdWorker()
	defer func() {
		c.inData, c.leftover, c.rest, c.feeding = false, false, nil, nil
		if held != nil {
			held.ReleaseFlush()
		}
	}()
	for {
		if c.pauseMask != 0 && held != nil {
			held.ReleaseFlush()
			held = nil
		}
		for c.pauseMask != 0 && !c.dead && !c.stopped {
			c.leftover = len(data) > 0
			c.rest = data
			c.rcond.Wait()
		}
		c.leftover = false
		if c.dead {
			return false
		}
		if c.tunnel != nil {
			if held != nil {
				held.ReleaseFlush() // (tunnelData may wait for the worker's credit)
				held = nil
			}
			return c.tunnelData(c.skipHead(data))
		}
		if c.stopped {
			return true
		}
		c.feeding = data
		n, ev := c.parser.Parse(data)
		data = data[n:]
		c.rest = data
		switch ev {
		case parse.NeedMore:
			return true
		case parse.GotHead:
			c.onHead()
		case parse.GotBody:
			if c.current != nil {
				c.current.onBodyChunk(c.parser.Body())
			}
		case parse.Complete:
			c.onComplete()
		case parse.Failed:
			c.onParseError(c.parser.Err())
			return !c.dead
		}
	}
}

func (c *Conn) onHead() {
	if c.stopped {
		return
	}
	h := c.parser.Head()
	r := c.newRequest(h)
	behind := c.last != nil
	if r.unsafe {
		c.unsafeInLine++
	}
	if c.last == nil {
		c.first = r
	} else {
		c.last.next = r
		c.charge(r)
	}
	c.last = r
	c.pending++
	c.phase = phaseActive
	if h.HasBody && c.pauseMask == 0 {
		c.deadline.Store(c.srv.Clock.After(c.lim.BodyTimeout))
	} else {
		c.deadline.Store(0)
	}
	if h.HasBody {
		c.current = r
	}
	if c.pending >= maxPipeline {
		c.pause(pausePipeline)
	}
	if r.payload == nil {
		// the target cannot be canonicalised (README "The router's rules")
		r.respondLocal(400, invalidURL, false, "")
		return
	}
	// RFC 9112 9.3.2: pipelined requests are processed in parallel only when all of
	// them are safe. A request behind an unsafe one, or an unsafe one behind any, is
	// routed once it is the first of the line (done): an app never handles a GET before
	// the POST sent ahead of it has been answered.
	// (A standalone server's own port keeps node's order: each request as soon as it
	// is parsed.)
	if behind && c.own == nil && (r.unsafe || c.unsafeInLine > 0 || c.deferred > 0) {
		r.routeLater = true
		c.deferred++
		return
	}
	c.route(r)
}

// newRequest copies what the request needs of the head (the parser reuses its buffers
// for the next request) and builds its REQUEST payload. A target that cannot be
// canonicalised leaves payload nil.
func (c *Conn) newRequest(h *parse.Head) *Request {
	r := &Request{
		conn:         c,
		versionMinor: h.VersionMinor,
		keepAlive:    h.KeepAlive,
		hasBody:      h.HasBody,
		expect100:    h.ExpectContinue,
		isHead:       h.Method == "HEAD",
		connect:      h.Method == "CONNECT",
		asksUpgrade:  h.Upgrade,
		contentLen:   h.ContentLength,
		body:         upload.New(),
		bodyDone:     !h.HasBody,
	}
	switch h.Method {
	case "GET", "HEAD", "OPTIONS", "TRACE":
	default:
		r.unsafe = true
	}
	// The app sees the target the router routes on (route.CanonicalizeTarget):
	// origin-form, dot segments resolved, and the Host an absolute-form target names.
	raw := string(h.URL())
	url, authority, ok := route.CanonicalizeTarget(raw)
	sent := url
	if c.own != nil {
		// a standalone server's own port: node's server gets the target as sent, and
		// the port's one queue takes any path, as node's server serves any path
		// (docs/wire-protocol.md "Connections of a port a standalone server owns")
		if !ok {
			url = "/"
		}
		sent, authority, ok = raw, "", true
	}
	if !ok {
		return r
	}
	r.url = url
	r.host = string(h.Host())
	if authority != "" {
		r.host = authority
	}
	var flags uint8
	if h.HasBody {
		flags |= wire.ReqHasBody
	}
	if h.KeepAlive {
		flags |= wire.ReqKeepAlive
	}
	if h.ExpectContinue {
		flags |= wire.ReqExpectContinue
	} else if h.ExpectOther {
		flags |= wire.ReqExpectOther
	}
	// An upgrade takes over the bytes after the head (node's parser hands them to
	// 'upgrade' as they are): a request that also has a body is served as a plain one.
	if h.Upgrade && !h.HasBody {
		r.upgrade = true
		flags |= wire.ReqUpgrade
	}
	if c.sec != nil {
		flags |= wire.ReqTLS
	}
	size := 16 + 8 + len(h.Method) + len(sent) + len(c.remoteAddr) + len(c.localAddr) + 8
	for i := 0; i < h.NumFields(); i++ {
		n, v := h.Field(i)
		size += 4 + len(n) + len(v)
	}
	p, pairsAt := wire.AppendRequestHead(make([]byte, 0, size+len(authority)), &wire.Request{
		Flags: flags, VersionMajor: 1, VersionMinor: uint8(h.VersionMinor), Family: c.family,
		RemotePort: c.remotePort, LocalPort: uint16(c.port), ConnectionID: c.id,
		Method: h.Method, URL: []byte(sent), RemoteAddress: c.remoteAddr, LocalAddress: c.localAddr,
	})
	pairs := uint32(0)
	sawHost := false
	for i := 0; i < h.NumFields(); i++ {
		n, v := h.Field(i)
		if authority != "" && len(n) == 4 && isNamed(n, "host") {
			// RFC 9112 3.2.2: the absolute-form target's authority is the Host
			v = []byte(authority)
			sawHost = true
		}
		p = wire.AppendField(p, n, v)
		pairs++
	}
	if authority != "" && !sawHost {
		p = wire.AppendField(p, "Host", authority)
		pairs++
	}
	wire.SetRequestPairs(p, pairsAt, pairs)
	if c.sec != nil {
		p = append(p, c.sec.Info...)
	}
	r.payload = p
	return r
}

func (c *Conn) onComplete() {
	if r := c.current; r != nil {
		c.current = nil
		h := c.parser.Head()
		for i := 0; i < h.NumTrailers(); i++ {
			n, v := h.Trailer(i)
			r.trailers = append(r.trailers, clone(n), clone(v))
		}
		r.onBodyComplete()
		if c.first == nil && (c.phase == phaseActive || c.phase == phaseDrain) {
			c.phase = phaseIdle
			c.deadline.Store(c.srv.Clock.After(c.lim.KeepAliveTimeout))
		} else if c.phase == phaseActive {
			c.deadline.Store(0)
		}
	}
	// after a request that does not keep the connection, nothing more is read, unless
	// it may switch protocols: what follows is then the tunnel's, or, once it is
	// refused, parsed as HTTP (its answer closes the connection when it must)
	ending := c.closing || c.endWhenIdle
	if last := c.last; last != nil && last.upgrade && !last.resDone && !ending {
		c.pause(pauseUpgrade)
	} else if (c.last != nil && !c.last.keepAlive) || ending {
		c.clientDone = c.last != nil && !c.last.keepAlive && !c.last.upgrade
		c.stopReading()
	} else {
		c.checkHeld()
	}
}

func (c *Conn) onParseError(err *parse.Error) {
	status := 400
	reason := ""
	if err != nil {
		status, reason = err.Status, err.Reason
	}
	// debug, not warn: clients control this, and a record per bad request is a lever
	c.srv.Log.Debug("bad request", "status", status, "reason", reason, "remoteAddress", c.remoteAddr)
	r := c.current
	c.current = nil
	c.stopReading()
	// a head the server's own port could not parse, nothing else on the connection:
	// node's 'clientError' (or node's answer), not the router's page
	if c.own != nil && r == nil && c.first == nil {
		c.ownClientError(status, reason, c.feeding)
		return
	}
	if r != nil && c.ownBodyError(r, status, reason) {
		return
	}
	if r != nil && !r.resDone && !r.aborted.Load() {
		// the body of a routed request turned out malformed: its worker may not have
		// run its handlers yet (bodyerror.go)
		if c.bodyErrWaits(r, status) {
			return
		}
		if r.headSent {
			c.destroyLocked()
			return
		}
		r.withdraw()
		r.respondLocal(status, plain, true, "")
		return
	}
	bad := &Request{conn: c, versionMinor: 1, bodyDone: true}
	if c.last == nil {
		c.first = bad
	} else {
		c.last.next = bad
	}
	c.last = bad
	c.pending++
	bad.respondLocal(status, plain, true, "")
}

// bodyTooLarge: a request's body passed its queue's max_body_size.
func (c *Conn) bodyTooLarge(r *Request) {
	c.current = nil
	c.stopReading()
	if r.headSent {
		c.destroyLocked()
		return
	}
	r.withdraw()
	r.respondLocal(413, plain, true, "")
}

func (c *Conn) stopReading() {
	if c.stopped {
		return
	}
	c.stopped = true
	c.rcond.Broadcast()
}

func (c *Conn) pause(reason int) {
	c.pauseMask |= reason
	if c.phase == phaseActive {
		c.deadline.Store(0)
	}
}

func (c *Conn) unpause(reason int) {
	if c.pauseMask&reason == 0 {
		return
	}
	c.pauseMask &^= reason
	if c.pauseMask != 0 || c.stopped || c.dead {
		return
	}
	if c.current != nil && c.phase == phaseActive {
		c.deadline.Store(c.srv.Clock.After(c.lim.BodyTimeout))
	}
	if c.inData {
		c.rcond.Broadcast()
	} else if c.readEnded {
		c.endInput()
	}
}

// charge charges (or re-charges) a request behind the first for what it may make the
// router hold.
func (c *Conn) charge(r *Request) {
	n := wire.ResponseWindow
	// (an owned port's: what it holds, as node pauses on the bytes it buffers, not on a
	// forecast: a read's pipelined requests all reach the app, owned_conn.go)
	if r.resDone || len(r.out) > n || c.own != nil {
		n = len(r.out)
	}
	c.held += n - r.charge
	r.charge = n
}

// checkHeld stops reading request heads while the budget is spent, and reads on once
// it is not. Only at a request boundary: a body being read is never held up by it.
func (c *Conn) checkHeld() {
	if c.held+len(c.out)+c.writing >= heldBudget {
		if c.pauseMask&pauseHeld == 0 && c.current == nil && !c.stopped {
			c.pause(pauseHeld)
		}
	} else if c.pauseMask&pauseHeld != 0 {
		c.unpause(pauseHeld)
	}
}

func (c *Conn) resumeForBody(r *Request) {
	if c.tunnel != nil {
		c.tunnelResume()
		return
	}
	if r == c.current || c.current == nil {
		c.unpause(pauseBody)
	}
}

// onEnd: the client's FIN. It sends nothing more but may still read (a half-close:
// RFC 9293 3.6). Every complete request it sent is answered, in order, the last with
// Connection: close, and then the connection ends (README "The router's rules": a
// client's FIN).
func (c *Conn) onEnd() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.readEnded = true
	if c.tunnel != nil {
		c.tunnelClientEnd()
		return
	}
	if c.errWait && c.errFin() {
		return
	}
	if c.finSent {
		c.destroyLocked()
		return
	}
	if c.stopped {
		if c.first == nil {
			c.endSocket()
		} else {
			c.armFinGrace()
		}
		return
	}
	if c.pauseMask == 0 {
		c.endInput()
	}
}

// armFinGrace: the client sent its FIN with requests unanswered. node and HTTP.SYS
// take a FIN as the client going away and abort them; across a process boundary
// nothing is synchronous, so the app gets finGrace ms, renewed while response bytes
// flow, before what is left is aborted.
func (c *Conn) armFinGrace() {
	if c.dead || c.first == nil {
		return
	}
	d := time.Duration(c.lim.FinGrace) * time.Millisecond
	if c.finTimer != nil {
		c.finTimer.Reset(d)
		return
	}
	if c.own != nil {
		// node's server.httpAllowHalfOpen: every request the client sent is answered
		if c.own.allowHalfOpen.Load() {
			return
		}
		// the workers hear of the FIN at once and abort what their app has not
		// answered, as node does when it reads one, and say so (owned_conn.go)
		if c.ownFin() {
			return
		}
	}
	c.finTimer = time.AfterFunc(d, c.finGraceOver)
}

func (c *Conn) finGraceOver() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead || c.first == nil {
		return
	}
	c.srv.Log.Debug("the client closed its side with requests unanswered: aborted", "remoteAddress", c.remoteAddr, "pending", c.pending)
	c.destroyLocked()
}

// endInput: no more input will come and everything received has been parsed.
func (c *Conn) endInput() {
	err := c.parser.Finish()
	cur := c.current
	// a body cut short after its request was answered needs no answer of its own
	if err != nil && (cur == nil || !cur.resDone) {
		c.onParseError(err)
		return
	}
	c.current = nil
	c.stopReading()
	if c.first == nil {
		c.endSocket()
	} else {
		c.armFinGrace()
	}
}

// ---- routing ---------------------------------------------------------------------

func (c *Conn) route(r *Request) {
	scheme := "http"
	if c.sec != nil {
		scheme = "https"
	}
	// a standalone server's port routes to its one queue, after its close() too: its
	// connections go on carrying requests to it until they end, as node's do
	q := c.ownQueue()
	res := route.Result{Target: q}
	if q == nil {
		res = c.srv.Table.Route(route.Args{Scheme: scheme, Port: c.port, Host: r.host, LocalAddress: c.localAddr, Path: r.url})
	}
	if res.Target != nil && c.secureChecks(r, res.Target) {
		return
	}
	q, _ = res.Target.(*queue.Queue)
	if q == nil {
		v := plain
		if res.Status == 400 {
			v = invalidHostname
			if route.IsInvalidUrl(r.url) {
				v = invalidURL
			}
		}
		r.respondLocal(res.Status, v, false, "")
		return
	}
	if c.srv.closing.Load() {
		r.respondLocal(503, noQueue, true, "")
		return
	}
	r.q = q
	if q.Settings.MaxBodySize > 0 && r.contentLen > q.Settings.MaxBodySize {
		c.bodyTooLarge(r)
		return
	}
	if c.answerFromCache(r) {
		return
	}
	if r.upgrade {
		c.upgradeHead(r)
	}
	c.announce()
	r.entry.Arrive(c.srv.Clock.Now())
	switch q.Enqueue(r) {
	case queue.Dispatched:
		if w := r.link.Worker(); w != nil {
			r.onDispatched(w)
		}
	case queue.Full:
		r.respondLocal(503, queueFull, false, "")
	case queue.Down:
		r.respondLocal(503, appDown, false, "")
	case queue.Gone:
		r.respondLocal(503, noQueue, true, "")
	}
}

// QueueTimeout answers a request that waited longer than its queue's timeout.
func QueueTimeout(qr queue.Request) { answerFromQueue(qr, queueTimeout, false) }

// QueueGone answers a request whose queue went (deleted, the router closing).
func QueueGone(qr queue.Request, closing bool) { answerFromQueue(qr, noQueue, closing) }

// AppDown answers a request of an app that cannot come back by itself.
func AppDown(qr queue.Request) { answerFromQueue(qr, appDown, false) }

func answerFromQueue(qr queue.Request, v variant, closing bool) {
	r, ok := qr.(*Request)
	if !ok {
		answerPeer(qr, v, closing)
		return
	}
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if !r.aborted.Load() && !c.dead && !r.resDone {
		r.respondLocal(503, v, closing, "")
	}
}

func (c *Conn) noteWorker(w *attach.Worker) {
	for _, x := range c.seen {
		if x == w {
			return
		}
	}
	c.seen = append(c.seen, w)
}

// ---- writing (in request order) ------------------------------------------------------

// dst is where r's response bytes go: the socket's queue when r is first in line, else
// r's own until its turn. Append to it, then call wrote.
func (c *Conn) dst(r *Request) *[]byte {
	if r == c.first {
		return &c.out
	}
	return &r.out
}

// wrote accounts n bytes appended at dst(r); ack of them are body bytes whose window
// goes back to the worker once the client took them.
func (c *Conn) wrote(r *Request, n, ack int) {
	if c.dead {
		c.out = c.out[:0]
		return
	}
	if c.finTimer != nil {
		c.finTimer.Reset(time.Duration(c.lim.FinGrace) * time.Millisecond)
	}
	if r == c.first {
		if ack > 0 {
			c.acks = append(c.acks, ackEntry{r, ack})
		}
		c.kick()
		return
	}
	r.heldAck += ack
	c.charge(r)
	_ = n
}

func (c *Conn) writeContinue(r *Request) {
	if r == c.first {
		r.continueState = continueSent
		c.out = append(c.out, continueBytes...)
		c.kick()
	} else {
		r.continueState = continueWanted
	}
}

// done: r's response is complete: move the line on.
func (c *Conn) done(r *Request) {
	if c.dead {
		return
	}
	r.bodyErrAnswered()
	if r != c.first {
		// finished behind the first: charged what it holds now, not a window
		if r.charge != 0 {
			c.charge(r)
			c.checkHeld()
		}
		return
	}
	for x := r; x != nil && x.resDone; {
		c.pending--
		if x.unsafe {
			c.unsafeInLine--
		}
		if x.close {
			c.first, c.last = nil, nil
			c.abortFrom(x.next)
			c.stopReading()
			c.endSocket()
			return
		}
		x = x.next
		c.first = x
		if x == nil {
			c.last = nil
		} else {
			c.flushHeld(x)
		}
	}
	// the request now first of the line may go to its app (onHead)
	if next := c.first; next != nil && next.routeLater {
		next.routeLater = false
		c.deferred--
		c.route(next)
		if c.dead {
			return
		}
	}
	if c.pending < maxPipeline {
		c.unpause(pausePipeline)
	}
	// the upgrade request was answered without switching: HTTP goes on
	if c.first == nil {
		c.unpause(pauseUpgrade)
	}
	c.checkHeld()
	if c.first == nil {
		l := c.lim
		switch {
		case c.readEnded || c.closing || (c.endWhenIdle && c.idle()):
			c.endSocket()
		case c.current == nil && (c.leftover || c.parser.InHead()):
			// a pipelined head has begun: it gets the head timeout, not the idle one
			c.ownHeld()
			c.phase = phaseHeaders
			c.deadline.Store(c.srv.Clock.After(l.HeadersTimeout))
		case c.current == nil:
			c.phase = phaseIdle
			c.deadline.Store(c.srv.Clock.After(l.KeepAliveTimeout))
		case c.current.discard:
			c.phase = phaseDrain
			c.deadline.Store(c.srv.Clock.After(l.DrainTimeout))
		}
	}
}

// flushHeld: r is first now: what it holds goes to the socket, and off the budget.
func (c *Conn) flushHeld(r *Request) {
	c.held -= r.charge
	r.charge = 0
	if r.continueState == continueWanted && !r.headSent {
		r.continueState = continueSent
		c.out = append(c.out, continueBytes...)
	}
	if len(r.out) > 0 {
		c.out = append(c.out, r.out...)
		if r.heldAck > 0 {
			c.acks = append(c.acks, ackEntry{r, r.heldAck})
		}
	}
	r.out = nil
	r.heldAck = 0
	c.kick()
}

// kick sends what is queued for the socket: written here and now as far as the socket
// takes it without waiting, the rest by the writer goroutine. Under the lock.
func (c *Conn) kick() {
	if c.writing != 0 || len(c.out) == 0 || c.dead {
		return
	}
	if c.batchW != nil {
		if !c.batched {
			c.batched = true
			c.batchW.DeferFlush(c)
		}
		return
	}
	n, err := c.tryWriteOut(c.out)
	if err != nil {
		c.destroyLocked()
		return
	}
	if n < len(c.out) {
		if n > 0 {
			c.out = c.out[:copy(c.out, c.out[n:])]
		}
		c.wakeWriter()
		return
	}
	c.out = c.out[:0]
	c.sent()
}

// FlushBatch writes what the frames of a worker's read appended (attach.Flusher).
func (c *Conn) FlushBatch() {
	c.mu.Lock()
	c.batched = false
	c.kick()
	c.mu.Unlock()
}

// sent: everything queued for the socket is in it; the workers' windows open again.
func (c *Conn) sent() {
	for i, a := range c.acks {
		if w := a.r.link.Worker(); w != nil {
			w.SendWindow(a.r, a.n)
		}
		c.acks[i] = ackEntry{}
	}
	c.acks = c.acks[:0]
	if c.finTimer != nil {
		c.finTimer.Reset(time.Duration(c.lim.FinGrace) * time.Millisecond)
	}
	if c.pauseMask&pauseHeld != 0 {
		c.checkHeld()
	}
	if c.ending && !c.finSent {
		c.wakeWriter()
	}
}

func (c *Conn) abortFrom(r *Request) {
	for ; r != nil; r = r.next {
		r.abort()
	}
}

// endSocket: FIN once what is queued is written; the peer then has lingerMs to close.
func (c *Conn) endSocket() {
	if c.dead || c.phase == phaseEnding {
		return
	}
	c.phase = phaseEnding
	c.deadline.Store(c.srv.Clock.After(lingerMs))
	c.ending = true
	if len(c.out) > 0 && c.writing == 0 && !c.writerUp {
		// the last answer goes first, written here or at the end of the worker's read
		// (kick), and its sent() sends the FIN: no writer goroutine for it (writer.go)
		c.kick()
		return
	}
	c.wakeWriter()
}

// shutdown: the router closes: no new requests; in-flight ones are answered with
// Connection: close.
func (c *Conn) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closing = true
	c.stopReading()
	if c.phase == phaseEnding {
		if c.finSent {
			c.destroyLocked()
		}
	} else if c.first == nil {
		c.destroyLocked()
	}
}

// closeWhenIdle: an idle connection ends now, a busy one once its responses are out
// (with Connection: close). Requests after those are not read.
func (c *Conn) closeWhenIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead || c.closing || c.endWhenIdle {
		return
	}
	c.endWhenIdle = true
	if c.current == nil {
		c.stopReading()
	}
	if c.phase == phaseEnding {
		return
	}
	// (errWait: a 'clientError' listener's socket.end())
	if c.idle() || c.errWait {
		c.endSocket()
	}
}

// endBy is a worker's CONN_END: only a worker that had requests of the connection may.
func (c *Conn) endBy(w *attach.Worker) {
	c.mu.Lock()
	ok := false
	for _, x := range c.seen {
		if x == w {
			ok = true
		}
	}
	c.mu.Unlock()
	if ok {
		c.closeWhenIdle()
	}
}

// idle: no request in flight and none begun.
func (c *Conn) idle() bool {
	return c.first == nil && c.current == nil && !c.leftover && !c.parser.InHead()
}

// timeout: the clock says the deadline passed.
func (c *Conn) timeout() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bodyErrTimeout() {
		return
	}
	if c.own != nil && c.ownTimeout() {
		return
	}
	c.destroyLocked()
}

func (c *Conn) destroy() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.destroyLocked()
}

// destroyLocked closes the socket at once: what is unanswered is aborted at its
// workers, and the workers that had requests of the connection hear it closed.
func (c *Conn) destroyLocked() {
	if c.dead {
		return
	}
	c.dead = true
	_ = c.nc.Close()
	if c.finTimer != nil {
		c.finTimer.Stop()
		c.finTimer = nil
	}
	c.stopped = true
	c.deadline.Store(0)
	first := c.first
	c.first, c.last = nil, nil
	c.abortFrom(first)
	if cur := c.current; cur != nil {
		c.current = nil
		cur.abort()
	}
	c.out = nil
	c.acks = nil
	c.rcond.Broadcast()
	c.wcond.Broadcast()
	for _, w := range c.seen {
		w.SendConnClosed(c.id)
	}
	c.seen = nil
	c.srv.removed(c)
	c.release()
}

func (c *Conn) writeLoop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for len(c.out) == 0 && !c.dead && !(c.ending && !c.finSent) {
			c.wcond.Wait()
		}
		if c.dead {
			return
		}
		if len(c.out) == 0 {
			// everything is out: the FIN
			c.finSent = true
			if c.closeNow() {
				c.destroyLocked()
				return
			}
			c.mu.Unlock()
			err := closeWrite(c.nc)
			c.mu.Lock()
			if err != nil || c.readEnded || c.srv.closing.Load() {
				c.destroyLocked()
				return
			}
			continue
		}
		buf, acks := c.out, c.acks
		c.out, c.acks = c.spare[:0], c.spareAcks[:0]
		c.writing = len(buf)
		c.mu.Unlock()
		_, err := c.nc.Write(buf)
		c.mu.Lock()
		c.writing = 0
		if err != nil {
			c.destroyLocked()
			return
		}
		if cap(buf) <= keepBuffer {
			c.spare = buf[:0]
		} else {
			c.spare = nil
		}
		for _, a := range acks {
			if w := a.r.link.Worker(); w != nil {
				w.SendWindow(a.r, a.n)
			}
		}
		clear(acks)
		c.spareAcks = acks[:0]
		if c.finTimer != nil {
			c.finTimer.Reset(time.Duration(c.lim.FinGrace) * time.Millisecond)
		}
		if c.pauseMask&pauseHeld != 0 {
			c.checkHeld()
		}
	}
}

func closeWrite(nc net.Conn) error {
	if tc, ok := nc.(*tls.Conn); ok {
		return closeWriteTLS(tc)
	}
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nc.Close()
}

// String names the connection in logs.
func (c *Conn) String() string {
	return "connection " + strconv.FormatUint(uint64(c.id), 10) + " from " + c.remoteAddr
}

// endBatch: the worker frame's call is over; its read's end writes what it appended.
func (c *Conn) endBatch() { c.batchW = nil }
