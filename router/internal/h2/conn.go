package h2

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/route"
	"httpsys/router/internal/upload"
)

// sink is what the writing Framer appends to: the bytes for the socket.
type sink struct{ b []byte }

func (s *sink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

type ackEntry struct {
	s *Stream
	n int
}

// Conn is one h2 client connection.
type Conn struct {
	h          *Server
	nc         net.Conn
	id         uint32
	port       int
	localAddr  string
	remoteAddr string
	remotePort uint16
	family     uint8
	tls        []byte
	tlsHost    string // the last host Misdirected passed
	clientCert bool   // the handshake had a client certificate (the output cache)
	// misdirected: the handshake's own 421 check (conn.Secure); nil: the Server's hook
	misdirected func(hostname string) bool
	release     func()
	deadline    atomic.Int64

	mu    sync.Mutex
	wcond sync.Cond // the writer waits here for bytes
	rcond sync.Cond // the reader waits here for the writer to take a burst of answers

	out       sink
	wf        *http2.Framer // writes frames into out
	henc      *hpack.Encoder
	hbuf      bytes.Buffer
	hdec      *hpack.Decoder
	decoding  *block
	acks      []ackEntry // DATA bytes in out, by stream
	spare     []byte
	spareAcks []ackEntry
	writing   int // bytes the writer is writing now
	ctlQueued int // control frames in out (maxQueuedControl)

	streams  map[uint32]*Stream
	active   []*Stream // streams with DATA to send
	maxSeen  uint32    // the highest stream id the client opened
	sendWin  int64     // the client's connection window
	peerWin  int64     // SETTINGS_INITIAL_WINDOW_SIZE of the client
	peerMax  int       // SETTINGS_MAX_FRAME_SIZE of the client
	recvOwed int       // connection window consumed and not returned yet
	charged  int       // its streams' charges against heldBudget
	tokens   float64   // the reset bucket
	tokensAt int64
	pingOut  bool
	greeted  bool // the client's SETTINGS came
	closing  bool // a GOAWAY went: no new streams
	ending   bool // close once out is written
	dead     bool
	seen     []*attach.Worker // the workers its streams went to (CONN_CLOSED)

	// a header block in progress (HEADERS without END_HEADERS, then CONTINUATION)
	hdrStream    uint32
	hdrEnd       bool // END_STREAM was on its HEADERS
	hdrFrag      []byte
	continuation int
}

func newConn(h *Server, nc net.Conn, port int, dual bool, release func()) *Conn {
	c := &Conn{h: h, nc: nc, port: port, release: release, family: 4, streams: map[uint32]*Stream{},
		sendWin: 65535, peerWin: 65535, peerMax: 16384, tokens: resetBurst}
	c.wcond.L = &c.mu
	c.rcond.L = &c.mu
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
	c.wf = http2.NewFramer(&c.out, nil)
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.hdec = hpack.NewDecoder(4096, func(f hpack.HeaderField) { c.decoding.add(f.Name, f.Value) })
	c.hdec.SetMaxStringLength(maxHeaderList)
	return c
}

// addrText as internal/conn's: node's text for an address.
func addrText(ip net.IP, dual bool) string {
	if dual && ip.To4() != nil {
		return "::ffff:" + ip.To4().String()
	}
	return ip.String()
}

func (c *Conn) start() {
	srv := c.h.srv
	c.mu.Lock()
	c.deadline.Store(srv.Clock.After(srv.Limits.HeadersTimeout))
	// the server's preface (RFC 9113 3.4): its SETTINGS, sent before the client's is read
	_ = c.wf.WriteSettings(
		http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: maxStreams},
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderList},
	)
	c.mu.Unlock()
	go c.writeLoop()
	go c.serve()
}

// ---- reading ---------------------------------------------------------------------

func (c *Conn) serve() {
	pre := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c.nc, pre); err != nil || string(pre) != http2.ClientPreface {
		c.destroy()
		return
	}
	fr := http2.NewFramer(nil, c.nc)
	fr.SetMaxReadFrameSize(maxFrame)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			c.readError(err)
			return
		}
		c.mu.Lock()
		if c.dead {
			c.mu.Unlock()
			return
		}
		err = c.frame(f)
		if err != nil {
			c.connError(err)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
}

// readError: the framer refused a frame, or the socket ended.
func (c *Conn) readError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var se http2.StreamError
	if errors.As(err, &se) {
		// (the framer reports a bad frame on a stream; the connection goes on, but this
		// reader cannot: the framer's state after it is not defined) RFC 9113 5.4.1
		c.connError(http2.ConnectionError(se.Code))
		return
	}
	var ce http2.ConnectionError
	if errors.As(err, &ce) {
		c.connError(ce)
		return
	}
	if errors.Is(err, http2.ErrFrameTooLarge) {
		c.connError(http2.ConnectionError(http2.ErrCodeFrameSize))
		return
	}
	c.destroyLocked()
}

// connError ends the connection with GOAWAY and the error's code (RFC 9113 5.4.1).
func (c *Conn) connError(err error) {
	code := http2.ErrCodeProtocol
	var ce http2.ConnectionError
	if errors.As(err, &ce) {
		code = http2.ErrCode(ce)
	}
	c.h.srv.Log.Debug("h2 connection error", "code", code.String(), "remoteAddress", c.remoteAddr)
	c.goAway(code)
	c.abortAll()
	if c.writing > 0 && code == http2.ErrCodeEnhanceYourCalm {
		// a flood whose client does not read: its GOAWAY would wait for nothing
		c.destroyLocked()
		return
	}
	c.end()
}

func (c *Conn) frame(f http2.Frame) error {
	if !c.greeted {
		// RFC 9113 3.4: the client's preface ends with a SETTINGS frame
		if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		c.greeted = true
	}
	if c.hdrStream != 0 {
		cf, ok := f.(*http2.ContinuationFrame)
		if !ok || cf.StreamID != c.hdrStream {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		c.continuation++
		c.hdrFrag = append(c.hdrFrag, cf.HeaderBlockFragment()...)
		if c.continuation > maxContinuations || len(c.hdrFrag) > 2*maxHeaderList {
			// (INTERNAL_ERROR: nghttp2's code for it, so node's)
			return http2.ConnectionError(http2.ErrCodeInternal)
		}
		if !cf.HeadersEnded() {
			return nil
		}
		id, end, frag := c.hdrStream, c.hdrEnd, c.hdrFrag
		c.hdrStream, c.hdrFrag, c.continuation = 0, nil, 0
		return c.headerBlock(id, end, frag)
	}
	switch f := f.(type) {
	case *http2.SettingsFrame:
		return c.onSettings(f)
	case *http2.PingFrame:
		if f.IsAck() {
			c.pingOut = false
			return nil
		}
		_ = c.wf.WritePing(true, f.Data)
		return c.control()
	case *http2.WindowUpdateFrame:
		return c.onWindowUpdate(f)
	case *http2.HeadersFrame:
		if f.HeadersEnded() {
			return c.headerBlock(f.StreamID, f.StreamEnded(), f.HeaderBlockFragment())
		}
		c.hdrStream, c.hdrEnd = f.StreamID, f.StreamEnded()
		c.hdrFrag = append([]byte(nil), f.HeaderBlockFragment()...)
		return nil
	case *http2.ContinuationFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	case *http2.DataFrame:
		return c.onData(f)
	case *http2.RSTStreamFrame:
		return c.onReset(f)
	case *http2.GoAwayFrame:
		// the client opens no more streams: those in flight finish, then it closes
		c.closeWhenIdleLocked()
		return nil
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	// PRIORITY and unknown types are ignored (RFC 9113 5.5)
	return nil
}

// control: a control frame was queued. Past maxQueuedControl unwritten, a reader
// that only outran the writer waits for it to take them; one whose writer is stuck
// (the client does not read what it asked for) has met a flood.
func (c *Conn) control() error {
	c.ctlQueued++
	c.kick()
	for c.ctlQueued > maxQueuedControl {
		if c.writing > 0 || c.dead {
			return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
		}
		c.rcond.Wait()
	}
	return nil
}

func (c *Conn) onSettings(f *http2.SettingsFrame) error {
	if f.IsAck() {
		return nil
	}
	if f.NumSettings() > maxSettings {
		return http2.ConnectionError(http2.ErrCodeEnhanceYourCalm)
	}
	if err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingInitialWindowSize:
			// RFC 9113 6.9.2: the change applies to every stream's window
			d := int64(s.Val) - c.peerWin
			c.peerWin = int64(s.Val)
			for _, st := range c.streams {
				st.sendWin += d
				if st.sendWin > 1<<31-1 {
					return http2.ConnectionError(http2.ErrCodeFlowControl)
				}
			}
		case http2.SettingMaxFrameSize:
			c.peerMax = int(s.Val)
		case http2.SettingHeaderTableSize:
			c.henc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	}); err != nil {
		return err
	}
	_ = c.wf.WriteSettingsAck()
	if err := c.control(); err != nil {
		return err
	}
	c.pumpData()
	return nil
}

func (c *Conn) onWindowUpdate(f *http2.WindowUpdateFrame) error {
	if f.StreamID == 0 {
		c.sendWin += int64(f.Increment)
		if c.sendWin > 1<<31-1 {
			return http2.ConnectionError(http2.ErrCodeFlowControl)
		}
		c.pumpData()
		return nil
	}
	s := c.streams[f.StreamID]
	if s == nil {
		if f.StreamID > c.maxSeen {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		return nil
	}
	s.sendWin += int64(f.Increment)
	if s.sendWin > 1<<31-1 {
		c.resetStream(s, http2.ErrCodeFlowControl)
		return nil
	}
	c.activate(s)
	c.pumpData()
	return nil
}

// headerBlock is a complete header block: a new stream's request, or a body's trailers.
func (c *Conn) headerBlock(id uint32, endStream bool, frag []byte) error {
	b := &block{}
	c.decoding = b
	_, err := c.hdec.Write(frag)
	if err == nil {
		err = c.hdec.Close()
	}
	c.decoding = nil
	if err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	if id%2 == 0 {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	if s := c.streams[id]; s != nil {
		// a trailing block: the request's trailers, with END_STREAM (RFC 9113 8.1)
		if s.remoteDone || !endStream {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		kept, ok := checkFields(b.fields, true)
		if b.over || !ok {
			c.resetStream(s, http2.ErrCodeProtocol)
			return nil
		}
		for _, f := range kept {
			s.trailers = append(s.trailers, []byte(f.name), []byte(f.value))
		}
		s.onBodyEnd()
		return nil
	}
	if id <= c.maxSeen {
		// a stream the router closed or reset: what the client sent before it heard
		// (trailers of a body nobody reads) is ignored, the block decoded for HPACK's
		// state (RFC 9113 5.1 "closed")
		return nil
	}
	c.maxSeen = id
	if c.closing || c.dead {
		c.writeReset(id, http2.ErrCodeRefusedStream)
		return c.control()
	}
	if len(c.streams) >= maxStreams {
		c.writeReset(id, http2.ErrCodeRefusedStream)
		return c.control()
	}
	if !b.over {
		kept, ok := checkFields(b.fields, false)
		if !ok {
			c.writeReset(id, http2.ErrCodeProtocol)
			return c.control()
		}
		b.fields = kept
	}
	c.newStream(id, b, endStream)
	return nil
}

func (c *Conn) newStream(id uint32, b *block, endStream bool) {
	srv := c.h.srv
	s := &Stream{c: c, id: id, sendWin: c.peerWin, recvWin: recvWindow, remoteDone: endStream, bodyDone: endStream}
	c.streams[id] = s
	if len(c.streams) == 1 {
		c.deadline.Store(srv.Clock.After(c.period()))
	}
	s.lastData = srv.Clock.Now()
	if b.over {
		s.respondLocal(431, 0)
		return
	}
	hd := c.headOf(b.fields, !endStream)
	s.hasBody = hd.hasBody
	s.isHead = hd.method == "HEAD"
	s.expect100 = hd.expect100
	s.contentLen = hd.contentLen
	s.body = upload.New()
	if hd.status != 0 {
		srv.Log.Debug("bad h2 request", "status", hd.status, "reason", hd.reason, "remoteAddress", c.remoteAddr)
		s.respondLocal(hd.status, hd.variant)
		return
	}
	s.payload = hd.payload
	s.host, s.url = hd.host, hd.url
	c.route(s, hd)
}

func (c *Conn) route(s *Stream, hd *head) {
	srv := c.h.srv
	res := srv.Table.Route(route.Args{Scheme: "https", Port: c.port, Host: hd.host, LocalAddress: c.localAddr, Path: hd.url})
	q, _ := res.Target.(*queue.Queue)
	if q == nil {
		v := pagePlain
		if res.Status == 400 {
			v = pageHostname
			if route.IsInvalidUrl(hd.url) {
				v = pageURL
			}
		}
		s.respondLocal(res.Status, v)
		return
	}
	// a host whose certificate entry is not the handshake's would pass another app's
	// client-certificate policy; checked once per host change, as the JS router did
	if mis := c.misdirect(); mis != nil && hd.host != c.tlsHost {
		if mis(route.HostnameOf(hd.host)) {
			s.respondLocal(421, pagePlain)
			return
		}
		c.tlsHost = hd.host
	}
	if srv.Closing() {
		s.respondLocal(503, pageNoQueue)
		return
	}
	s.q = q
	if q.Settings.MaxBodySize > 0 && s.contentLen > q.Settings.MaxBodySize {
		s.bodyTooLarge()
		return
	}
	if s.answerFromCache() {
		return
	}
	s.entry.Arrive(srv.Clock.Now())
	switch q.Enqueue(s) {
	case queue.Dispatched:
		if w := s.link.Worker(); w != nil {
			s.onDispatched(w)
		}
	case queue.Full:
		s.respondLocal(503, pageQueueFull)
	case queue.Down:
		s.respondLocal(503, pageAppDown)
	case queue.Gone:
		s.respondLocal(503, pageNoQueue)
	}
}

func (c *Conn) onData(f *http2.DataFrame) error {
	n := int(f.Length) // padding counts against the windows too (RFC 9113 6.9.1)
	// the connection's window is returned as bytes arrive: each stream's own window
	// bounds what the router holds, and a stalled stream must not stall the others
	c.recvOwed += n
	if c.recvOwed >= windowStep {
		_ = c.wf.WriteWindowUpdate(0, uint32(c.recvOwed))
		c.recvOwed = 0
		c.kick()
	}
	s := c.streams[f.StreamID]
	if s == nil {
		if f.StreamID > c.maxSeen {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		// a stream reset or answered: what was in flight is dropped
		return nil
	}
	if s.remoteDone {
		c.resetStream(s, http2.ErrCodeStreamClosed)
		return nil
	}
	if n > s.recvWin {
		c.resetStream(s, http2.ErrCodeFlowControl)
		return nil
	}
	s.recvWin -= n
	s.owed += n - len(f.Data())
	s.lastData = c.h.srv.Clock.Now()
	if len(f.Data()) > 0 {
		s.onBodyChunk(f.Data())
	}
	if s.closed {
		return nil
	}
	if f.StreamEnded() {
		s.onBodyEnd()
	}
	s.returnWindow()
	return nil
}

func (c *Conn) onReset(f *http2.RSTStreamFrame) error {
	s := c.streams[f.StreamID]
	if s == nil {
		if f.StreamID > c.maxSeen {
			return http2.ConnectionError(http2.ErrCodeProtocol)
		}
		return nil
	}
	// rapid reset: a client that opens and cancels streams faster than the rate costs
	// the router (and its apps) a request each; past the bucket, the connection goes
	now := c.h.srv.Clock.Now()
	c.tokens = min(resetBurst, c.tokens+float64(now-c.tokensAt)*resetRate/1000)
	c.tokensAt = now
	if c.tokens < 1 {
		// (INTERNAL_ERROR: nghttp2's code for it, so node's)
		return http2.ConnectionError(http2.ErrCodeInternal)
	}
	c.tokens--
	s.remoteDone = true
	s.localDone = true
	c.closeStream(s)
	return nil
}

// ---- streams ----------------------------------------------------------------------

// writeReset queues RST_STREAM for id.
func (c *Conn) writeReset(id uint32, code http2.ErrCode) {
	_ = c.wf.WriteRSTStream(id, code)
	c.kick()
}

// resetStream resets s (RFC 9113 5.4.2) and closes it.
func (c *Conn) resetStream(s *Stream, code http2.ErrCode) {
	if s.closed {
		return
	}
	c.writeReset(s.id, code)
	s.localDone, s.remoteDone = true, true
	c.closeStream(s)
}

// closeStream: s is closed both ways (or reset): what it holds goes, its request is
// aborted if unanswered.
func (c *Conn) closeStream(s *Stream) {
	if s.closed {
		return
	}
	s.closed = true
	delete(c.streams, s.id)
	if !s.resDone {
		s.abort()
	}
	s.pend, s.pendBytes = nil, 0
	s.body.Drop()
	c.charged -= s.charge
	s.charge = 0
	if len(c.streams) == 0 && !c.dead {
		if c.closing {
			c.end()
		} else {
			c.deadline.Store(c.h.srv.Clock.After(c.h.srv.Limits.KeepAliveTimeout))
		}
	}
}

// maybeClosed: a stream whose both sides ended is closed.
func (c *Conn) maybeClosed(s *Stream) {
	if s.localDone && s.remoteDone {
		c.closeStream(s)
	}
}

func (c *Conn) activate(s *Stream) {
	if s.queued || s.closed {
		return
	}
	s.queued = true
	c.active = append(c.active, s)
}

// pumpData frames what the streams have to send as far as the client's windows allow,
// a frame per stream per round (RFC 9113 5.3: no priority; round robin).
func (c *Conn) pumpData() {
	if c.dead {
		return
	}
	for progress := true; progress && len(c.active) > 0; {
		progress = false
		for i := 0; i < len(c.active); {
			s := c.active[i]
			if s.writeSome() {
				progress = true
			}
			if !s.wantsWrite() {
				s.queued = false
				c.active[i] = c.active[len(c.active)-1]
				c.active[len(c.active)-1] = nil
				c.active = c.active[:len(c.active)-1]
				continue
			}
			i++
		}
	}
	c.kick()
}

func (c *Conn) noteWorker(w *attach.Worker) {
	for _, x := range c.seen {
		if x == w {
			return
		}
	}
	c.seen = append(c.seen, w)
}

// misdirect is the connection's 421 check: the handshake's, else the Server's hook.
func (c *Conn) misdirect() func(hostname string) bool {
	if c.misdirected != nil {
		return c.misdirected
	}
	if mis := c.h.Misdirected; mis != nil {
		return func(hostname string) bool { return mis(c.nc, c.port, hostname) }
	}
	return nil
}
