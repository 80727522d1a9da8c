package h2

import (
	"encoding/binary"
	"strconv"
	"sync/atomic"

	"golang.org/x/net/http2"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/cache"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/upload"
	"httpsys/router/internal/wire"
)

const (
	pagePlain     = conn.Plain
	pageHostname  = conn.InvalidHostname
	pageURL       = conn.InvalidURL
	pageQueueFull = conn.QueueFull
	pageNoQueue   = conn.NoQueue
	pageAppDown   = conn.AppDownV
	pageOpaque    = conn.Opaque
)

// 100 Continue: not asked for, sent.
const (
	continueNone = iota
	continueSent
)

// Stream is one h2 stream as a queue request: the way in is
// HTTP/1.1's (routing, queue, the worker's body credit, with the stream's receive
// window instead of a paused socket), the way out HEADERS and DATA. Its fields are its
// connection's lock's, but Entry (its queue's) and Link (its worker's).
type Stream struct {
	entry   queue.Entry
	link    attach.Link
	aborted atomic.Bool

	c  *Conn
	id uint32
	q  *queue.Queue

	payload    []byte
	host       string // as routed (the cache's key)
	url        string
	trailers   [][]byte
	hasBody    bool
	isHead     bool
	expect100  bool
	contentLen int64

	// stream states (RFC 9113 5.1): END_STREAM or RST each way
	remoteDone bool
	localDone  bool
	closed     bool

	// request body (client -> worker)
	bodyDone      bool
	discard       bool
	body          upload.Body // credit, held bytes, replay
	bodyBytes     int64
	continueState int
	recvWin       int   // what the client may still send on the stream
	owed          int   // receive window consumed, not returned yet
	lastData      int64 // the body timeout (Conn.Timeout)
	windowFor     *attach.Worker

	// response (worker -> client)
	headSent  bool
	noBody    bool
	resDone   bool
	pend      [][]byte // DATA not framed yet (the client's windows)
	pendBytes int
	endAfter  bool // END_STREAM once pend is out
	rstAfter  bool // then RST_STREAM(NO_ERROR): the upload nobody reads stops
	queued    bool // in the connection's active list
	sendWin   int64
	inOut     int // DATA bytes framed, not written to the socket yet

	// the output cache (cache.go)
	cacheEpoch uint64
	capture    *cache.Capture

	// the held-bytes budget (budget.go)
	resCredit int // response bytes its worker may still send
	win       int // resCredit + held may reach this
	charge    int
}

// QueueEntry is the queue's part (queue.Request).
func (s *Stream) QueueEntry() *queue.Entry { return &s.entry }

// Aborted: the client went away (queue.Request).
func (s *Stream) Aborted() bool { return s.aborted.Load() }

// Link is the worker's part (attach.Request).
func (s *Stream) Link() *attach.Link { return &s.link }

// HasBody: BODY frames follow (attach.Request).
func (s *Stream) HasBody() bool { return s.hasBody }

// AppendRequest appends the REQUEST frame (attach.Request).
func (s *Stream) AppendRequest(wr *wire.Writer, id uint32) {
	wr.Prebuilt(wire.TypeRequest, id, s.payload)
}

// AppendBodyEnd appends BODY_END with the trailers (attach.Request).
func (s *Stream) AppendBodyEnd(wr *wire.Writer, id uint32) {
	wr.BeginBodyEnd(id)
	for i := 0; i+1 < len(s.trailers); i += 2 {
		wr.Field(s.trailers[i], s.trailers[i+1])
	}
	_ = wr.End()
}

// ---- request body; under the connection's lock ----

func (s *Stream) onBodyChunk(chunk []byte) {
	s.bodyBytes += int64(len(chunk))
	if s.contentLen >= 0 && s.bodyBytes > s.contentLen {
		// RFC 9113 8.1.1: DATA beyond Content-Length makes the request malformed
		s.c.resetStream(s, http2.ErrCodeProtocol)
		return
	}
	if s.discard {
		s.owed += len(chunk)
		return
	}
	if s.q != nil && s.q.Settings.MaxBodySize > 0 && s.bodyBytes > s.q.Settings.MaxBodySize {
		s.bodyTooLarge()
		return
	}
	w := s.link.Worker()
	if w != nil && s.body.Take(len(chunk)) {
		s.owed += len(chunk)
		s.sendBody(w, clone(chunk))
		return
	}
	s.body.Hold(clone(chunk))
	if w != nil {
		s.pumpBody(w)
	}
}

func (s *Stream) sendBody(w *attach.Worker, chunk []byte) {
	s.body.Sending(chunk, !s.link.Seen())
	w.SendBody(s, chunk)
}

// onBodyEnd: END_STREAM from the client.
func (s *Stream) onBodyEnd() {
	if s.contentLen >= 0 && s.bodyBytes != s.contentLen && !s.discard {
		s.c.resetStream(s, http2.ErrCodeProtocol)
		return
	}
	s.remoteDone = true
	s.bodyDone = true
	if w := s.link.Worker(); w != nil && s.body.Held == nil && !s.body.EndSent && !s.discard {
		s.body.EndSent = true
		w.SendBodyEnd(s)
	}
	s.c.maybeClosed(s)
}

// pumpBody sends held body bytes within the worker's credit; the client's window
// opens by what went.
func (s *Stream) pumpBody(w *attach.Worker) {
	for chunk, ok := s.body.Next(); ok; chunk, ok = s.body.Next() {
		s.owed += len(chunk)
		s.sendBody(w, chunk)
	}
	if s.bodyDone && s.body.Held == nil && !s.body.EndSent {
		s.body.EndSent = true
		w.SendBodyEnd(s)
	}
	s.returnWindow()
}

// returnWindow: a WINDOW_UPDATE for what the worker took (or was dropped), in steps.
func (s *Stream) returnWindow() {
	if s.closed || s.remoteDone || s.owed == 0 {
		return
	}
	// (in steps: the client keeps the rest of its window meanwhile, so a step never
	// stalls it, and a body of small frames costs no WINDOW_UPDATE each)
	if s.owed >= windowStep {
		_ = s.c.wf.WriteWindowUpdate(s.id, uint32(s.owed))
		s.recvWin += s.owed
		s.owed = 0
		s.c.kick()
	}
}

// bodyTooLarge: 413 and the upload is stopped.
func (s *Stream) bodyTooLarge() {
	if s.headSent {
		s.c.resetStream(s, http2.ErrCodeCancel)
		return
	}
	s.withdraw()
	s.respondLocal(413, pagePlain)
}

func (s *Stream) startDiscard() {
	s.discard = true
	s.owed += s.body.Drop()
	s.returnWindow()
}

// ---- frames from the worker (attach.Request): on the worker's goroutine ----

// Dispatched: a queue's pump gave the stream to w.
func (s *Stream) Dispatched(w *attach.Worker) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		w.SendConnClosed(c.id)
		return
	}
	c.noteWorker(w)
	if s.link.Worker() != w || s.resDone || s.aborted.Load() {
		return
	}
	s.onDispatched(w)
}

func (s *Stream) onDispatched(w *attach.Worker) {
	if s.q != nil && s.q.Cache != nil {
		s.cacheEpoch = s.q.Cache.Epoch()
	}
	s.started(w)
	if s.hasBody && (s.body.Held != nil || s.bodyDone) {
		s.pumpBody(w)
	}
}

// started: the stream's window at w begins, once per dispatch: on Dispatched, or on
// w's first frame for it when that came first (a queue's pump run by another
// worker's goroutine calls Dispatched after w may have answered).
func (s *Stream) started(w *attach.Worker) {
	if s.windowFor == w {
		return
	}
	s.windowFor = w
	s.c.noteWorker(w)
	s.windowStarted(w)
}

// OnRead: the worker granted body credit.
func (s *Stream) OnRead(w *attach.Worker, n uint32) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.link.Worker() != w || s.closed {
		return
	}
	s.body.Credit += int64(n)
	// HTTP.SYS sends 100 Continue on the first body read
	if s.expect100 && s.continueState == continueNone && !s.headSent && !s.bodyDone {
		s.writeContinue()
	}
	if !s.discard {
		s.pumpBody(w)
	}
}

// OnContinue: the worker's writeContinue().
func (s *Stream) OnContinue(w *attach.Worker) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.link.Worker() == w && s.continueState == continueNone && !s.headSent && !s.bodyDone {
		s.writeContinue()
	}
}

// writeContinue: 100 Continue is an informational HEADERS frame (RFC 9113 8.1).
func (s *Stream) writeContinue() {
	s.continueState = continueSent
	if s.closed {
		return
	}
	s.writeHeaders([]field{{":status", "100"}}, false)
}

// OnInfo: an interim response (102, 103) as an interim HEADERS frame.
func (s *Stream) OnInfo(w *attach.Worker, p []byte) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.link.Worker() != w || s.headSent || s.resDone || s.closed {
		return
	}
	status := int(binary.LittleEndian.Uint16(p))
	rlen := int(binary.LittleEndian.Uint16(p[8:]))
	bs := 14 + rlen
	fields, ok := headersOf(p[bs:bs+int(binary.LittleEndian.Uint32(p[10+rlen:]))], status, "")
	if ok {
		s.writeHeaders(fields, false)
	}
}

// OnCancel: the worker destroys the request's socket: on h2 only its stream is reset.
func (s *Stream) OnCancel(w *attach.Worker) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.link.Worker() == w {
		c.resetStream(s, http2.ErrCodeCancel)
	}
}

// OnResponse: a RESPONSE frame (checked).
func (s *Stream) OnResponse(w *attach.Worker, p []byte) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.link.Worker() != w || s.headSent {
		return
	}
	s.started(w)
	status := int(binary.LittleEndian.Uint16(p))
	flags := p[2]
	if flags&wire.ResOpaque != 0 || status == 101 {
		// RFC 9113 8.6: no 101 in HTTP/2 (an h2 request never asks to upgrade)
		w.SendAbort(s)
		s.recharge()
		s.respondLocal(501, pageOpaque)
		return
	}
	s.headSent = true
	s.noBody = s.isHead || status < 200 || status == 204 || status == 304
	more := flags&wire.ResMore != 0
	rlen := int(binary.LittleEndian.Uint16(p[8:]))
	bs := 14 + rlen
	bodyStart := bs + int(binary.LittleEndian.Uint32(p[10+rlen:]))
	body := p[bodyStart:]
	s.beginCapture(p, bodyStart)
	if s.closed {
		if !more {
			s.finish()
		}
		return
	}
	fields, ok := headersOf(p[bs:bodyStart], status, string(c.h.srv.Clock.Date()))
	if !ok {
		// a head node's http2 would refuse: the stream is reset (the JS router's answer)
		c.h.srv.Log.Debug("an h2 response head was refused; the stream is reset", "status", status)
		w.SendAbort(s)
		s.finish()
		c.resetStream(s, http2.ErrCodeInternal)
		return
	}
	endStream := s.noBody || (!more && len(body) == 0)
	s.writeHeaders(fields, endStream)
	if more {
		if len(body) > 0 {
			if s.noBody {
				w.SendCredit(s, len(body))
			} else {
				s.writeBody(body, len(body))
			}
		}
		return
	}
	s.finish()
	if !endStream {
		if len(body) > 0 && !s.noBody {
			s.writeBody(body, 0)
		}
		s.endData()
	}
	s.closeIfBodyLeft()
}

// OnResBody: a RES_BODY frame.
func (s *Stream) OnResBody(w *attach.Worker, flags byte, body []byte) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.link.Worker() != w || !s.headSent || s.resDone {
		return
	}
	s.started(w)
	more := flags&wire.ResMore != 0
	s.captureBody(body)
	if len(body) > 0 {
		if s.noBody {
			if more {
				w.SendCredit(s, len(body))
			}
		} else if !s.closed {
			ack := 0
			if more {
				ack = len(body)
			}
			s.writeBody(body, ack)
		}
	}
	if !more {
		s.finish()
		if !s.noBody {
			s.endData()
		}
		s.closeIfBodyLeft()
	}
}

// Lost: the worker went away holding the stream (attach.Request).
func (s *Stream) Lost(w *attach.Worker, unseen, requeue bool) bool {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.resDone || s.aborted.Load() {
		return false
	}
	s.recharge()
	if unseen && requeue && !s.headSent {
		s.resetForRequeue()
		return true
	}
	switch {
	case s.headSent:
		// the response had begun: only its stream is reset, not the connection
		c.resetStream(s, http2.ErrCodeCancel)
	case unseen:
		s.respondLocal(503, pageNoQueue)
	default:
		s.respondLocal(502, pagePlain)
	}
	return false
}

// resetForRequeue: its worker died before acknowledging it; the stream starts again at
// the next worker (its window too), the body bytes already sent held for it.
func (s *Stream) resetForRequeue() {
	s.body.Requeue()
	s.windowFor = nil
}

// AnswerFromQueue: its queue answers it 503 (timeout, queue gone, app down).
func (s *Stream) AnswerFromQueue(v conn.Variant, _ bool) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.aborted.Load() && !c.dead {
		s.respondLocal(503, v)
	}
}

// ---- the end of a request; under the connection's lock ----

// finish: the response is complete, the worker is done with the stream.
func (s *Stream) finish() {
	s.resDone = true
	s.commitCapture()
	if w := s.link.Worker(); w != nil {
		w.Release(s, true)
	}
	s.recharge()
	if !s.bodyDone {
		s.startDiscard()
	}
}

// closeIfBodyLeft: the response is complete and the client still sends a body nobody
// reads: RST_STREAM(NO_ERROR) once the response is out stops it (RFC 9113 8.1).
func (s *Stream) closeIfBodyLeft() {
	if s.bodyDone || s.closed {
		return
	}
	s.rstAfter = true
	if s.localDone {
		s.c.resetStream(s, http2.ErrCodeNo)
	}
}

// respondLocal: the router answers the stream itself, the page HTTP/1.1 gets, as
// HEADERS + DATA; the connection stays.
func (s *Stream) respondLocal(status int, v conn.Variant) {
	if s.headSent {
		return
	}
	s.headSent = true
	s.resDone = true
	if !s.bodyDone {
		s.startDiscard()
	}
	if s.closed {
		return
	}
	body := conn.Page(status, v)
	fields := []field{
		{":status", strconv.Itoa(status)},
		{"content-type", "text/html; charset=us-ascii"},
		{"server", "httpsys"},
		{"date", string(s.c.h.srv.Clock.Date())},
		{"content-length", strconv.Itoa(len(body))},
	}
	if status == 503 {
		fields = append(fields, field{"retry-after", "1"})
	}
	s.writeHeaders(fields, s.isHead)
	if !s.isHead {
		s.pend = append(s.pend, []byte(body))
		s.pendBytes += len(body)
		s.endData()
	}
	s.closeIfBodyLeft()
}

// abort: the client reset the stream or went away, or the router gives up on it.
func (s *Stream) abort() {
	if s.aborted.Load() {
		return
	}
	s.aborted.Store(true)
	s.withdraw()
}

// withdraw takes the stream back from its queue or worker.
func (s *Stream) withdraw() {
	if s.q != nil {
		s.q.Forget(s)
	}
	if w := s.link.Worker(); w != nil && !s.resDone {
		w.SendAbort(s)
	}
	s.body.Drop()
	s.recharge()
}

func clone(b []byte) []byte {
	return append(make([]byte, 0, len(b)), b...)
}
