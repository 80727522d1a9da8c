package conn

import (
	"encoding/binary"
	"slices"
	"sync/atomic"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/cache"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/upload"
	"httpsys/router/internal/wire"
)

const (
	// bodyHold: request-body bytes the router holds for one request beyond its
	// worker's credit before it stops reading the client
	bodyHold = wire.InitialBodyWindow
)

// 100 Continue: not asked for, to send when the request's turn to write comes, sent.
const (
	continueNone = iota
	continueWanted
	continueSent
)

// Request is one request from its head until its response is complete
// (docs/wire-protocol.md "Lifecycle"): which queue and worker hold it, its body's flow
// control (the worker's credit), and its response bytes. Its fields are its
// connection's lock's, except Entry (its queue's lock) and Link (its worker's lock).
type Request struct {
	entry   queue.Entry
	link    attach.Link
	aborted atomic.Bool
	// a port a standalone server owns: withdrawn while it waited for a worker, it
	// still reaches its app (node emitted 'request' when it read the head) and is
	// aborted there (owned_conn.go)
	abortOnDispatch atomic.Bool
	// its body's error (a status), waiting for its worker's ACK (bodyerror.go)
	bodyErr int

	conn *Conn
	next *Request // the next request on the connection (responses go out in order)
	q    *queue.Queue

	// the head, as the worker gets it: the REQUEST payload built where it was read
	payload      []byte
	url          string // the canonical target (routing and the app see it)
	host         string // the Host routing uses
	trailers     [][]byte
	versionMinor int
	keepAlive    bool
	hasBody      bool
	expect100    bool
	isHead       bool
	connect      bool // a CONNECT (only a port a standalone server owns takes one)
	unsafe       bool // not GET, HEAD, OPTIONS, TRACE (RFC 9110 9.2.1)
	asksUpgrade  bool // Connection: upgrade and an Upgrade header (body or not: never a cache hit)
	contentLen   int64

	// body (client -> worker)
	bodyDone      bool
	discard       bool
	body          upload.Body // credit, held bytes, replay
	bodyBytes     int64
	continueState int

	// response (worker -> client)
	headSent bool
	noBody   bool
	resDone  bool
	close    bool
	out      []byte      // held while an earlier response is still going out
	heldAck  int         // body bytes in out to acknowledge once written
	charge   int         // what this request counts against the connection's held budget
	held     heldRing    // held body bytes, and those kept for a replay (held.go)
	blocks   []heldBlock // held body bytes that are views of read blocks (blocks.go)
	// the worker's body frame arriving in pieces (stream.go) has MORE: its bytes are acknowledged
	pieceMore bool

	routeLater bool // routed once it is first of its connection's line (RFC 9112 9.3.2)

	// upgrades (tunnel.go)
	upgrade     bool // it asked to upgrade and has no body: a 101 may switch protocols
	headBytes   int  // the bytes after its head its worker got as `head` (REQUEST flag 128)
	tunneled    bool // answered 101: the client's bytes are its body, the worker's its response
	workerEnded bool // the worker's FIN (a RES_BODY without MORE) went out to the client
	// the output cache (cached.go): its queue's instance generation when it went to a
	// worker, and its response being copied into the cache
	cacheEpoch uint64
	capture    *cache.Capture
}

// QueueEntry is the queue's part (queue.Request).
func (r *Request) QueueEntry() *queue.Entry { return &r.entry }

// Aborted: the client went away (queue.Request).
func (r *Request) Aborted() bool { return r.aborted.Load() && !r.abortOnDispatch.Load() }

// Link is the worker's part (attach.Request).
func (r *Request) Link() *attach.Link { return &r.link }

// HasBody: BODY frames follow (attach.Request).
func (r *Request) HasBody() bool { return r.hasBody }

// AppendRequest appends the REQUEST frame (attach.Request).
func (r *Request) AppendRequest(wr *wire.Writer, id uint32) {
	wr.Prebuilt(wire.TypeRequest, id, r.payload)
}

// AppendBodyEnd appends BODY_END with the trailers (attach.Request).
func (r *Request) AppendBodyEnd(wr *wire.Writer, id uint32) {
	wr.BeginBodyEnd(id)
	for i := 0; i+1 < len(r.trailers); i += 2 {
		wr.Field(r.trailers[i], r.trailers[i+1])
	}
	_ = wr.End()
}

// ---- request body (client -> worker); under the connection's lock ----

func (r *Request) onBodyChunk(chunk []byte) {
	r.bodyBytes += int64(len(chunk))
	if r.discard {
		return
	}
	// (an upgraded connection's bytes are not a body: no limit)
	if r.q != nil && r.q.Settings.MaxBodySize > 0 && r.bodyBytes > r.q.Settings.MaxBodySize && !r.tunneled {
		r.conn.bodyTooLarge(r)
		return
	}
	w := r.link.Worker()
	blk := r.blockOf(chunk)
	if w != nil && r.body.Take(len(chunk)) {
		if blk != nil {
			r.body.Sending(chunk, false)
			w.SendBodyBlock(r, chunk, blk)
			return
		}
		r.sendBody(w, chunk, false)
		return
	}
	if blk == nil || !r.holdInBlock(chunk, blk) {
		r.body.Hold(r.keep(chunk))
	}
	if w != nil {
		r.pumpBody(w)
	}
	if r.body.HeldBytes >= bodyHold {
		r.conn.pause(pauseBody)
	}
}

// sendBody: owned says chunk is the request's own (not the read buffer).
func (r *Request) sendBody(w *attach.Worker, chunk []byte, owned bool) {
	// the worker saw the request, or it is a tunnel (nothing to replay): a chunk of the read buffer is
	// copied into the worker's write buffer, with no allocation of its own
	if !owned && (r.link.Seen() || r.tunneled) {
		r.body.Sending(chunk, false) // seen: what was kept for a replay goes
		w.SendBodyCopy(r, chunk)
		return
	}
	// kept for a replay (the worker has not acknowledged the request): copied into the
	// request's ring, not a slice of its own (held.go)
	if !owned && r.ringWorthy(len(chunk)) {
		r.sendHeld(w, r.keep(chunk))
		return
	}
	// a BODY of RefThreshold bytes or more is written from the chunk itself, after the
	// read buffer has been reused: it must be the request's own
	if !owned && len(chunk) >= wire.RefThreshold {
		chunk = clone(chunk)
		owned = true
	}
	// (a tunnel's request was answered: its worker saw it, nothing is replayed)
	unseen := !r.link.Seen() && !r.tunneled
	if unseen && !owned {
		chunk = clone(chunk)
	}
	r.body.Sending(chunk, unseen)
	w.SendBody(r, chunk)
}

func (r *Request) onBodyComplete() {
	r.bodyDone = true
	if w := r.link.Worker(); w != nil && r.body.Held == nil && !r.body.EndSent && !r.discard {
		r.body.EndSent = true
		w.SendBodyEnd(r)
	}
	r.heldDone()
}

// pumpBody sends held body bytes within the worker's credit.
func (r *Request) pumpBody(w *attach.Worker) {
	for chunk, ok := r.body.Next(); ok; chunk, ok = r.body.Next() {
		r.sendHeld(w, chunk) // (it may be a view of the request's ring: held.go)
	}
	r.heldDone()
	if r.body.HeldBytes < bodyHold {
		r.conn.resumeForBody(r)
	}
	if r.bodyDone && r.body.Held == nil && !r.body.EndSent {
		r.body.EndSent = true
		w.SendBodyEnd(r)
		if r.tunneled {
			r.conn.tunnelMaybeDone()
		}
	}
}

// ---- frames from the worker (attach.Request): on the worker's goroutine ----

// Dispatched: a queue's pump gave the request to w.
func (r *Request) Dispatched(w *attach.Worker) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	c.served = true
	c.heldSent = false
	if r.dispatchedWithdrawn(w) {
		return
	}
	if c.dead {
		// it closed before it heard of the worker, which had a request of it
		w.SendConnClosed(c.id)
		return
	}
	c.noteWorker(w)
	if r.link.Worker() != w || r.resDone || r.aborted.Load() {
		return
	}
	r.onDispatched(w)
	r.bodyErrDispatched()
}

func (r *Request) onDispatched(w *attach.Worker) {
	r.conn.noteWorker(w)
	if r.q != nil && r.q.Cache != nil {
		r.cacheEpoch = r.q.Cache.Epoch()
	}
	if r.hasBody && (r.body.Held != nil || r.bodyDone) {
		r.pumpBody(w)
	}
	r.conn.finDispatched()
}

// OnRead: the worker granted body credit (its readBody).
func (r *Request) OnRead(w *attach.Worker, n uint32) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.link.Worker() != w {
		return
	}
	r.body.Credit += int64(n)
	// HTTP.SYS sends 100 Continue on the first body read, so a worker that reads
	// without calling writeContinue never leaves the client waiting
	if r.expect100 && r.continueState == continueNone && !r.headSent && !r.bodyDone {
		c.writeContinue(r)
	}
	if !r.discard {
		r.pumpBody(w)
	}
}

// OnContinue: the worker's writeContinue().
func (r *Request) OnContinue(w *attach.Worker) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.link.Worker() == w && r.continueState == continueNone && !r.headSent && !r.bodyDone {
		c.writeContinue(r)
	}
}

// OnInfo: an interim response (102, 103) before the final one, in order with the
// connection's other responses; never to an HTTP/1.0 client (RFC 9110 15.2) or once
// the final head went out.
func (r *Request) OnInfo(w *attach.Worker, p []byte) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batchW = w
	defer c.endBatch()
	if r.link.Worker() != w || r.headSent || r.resDone || r.versionMinor == 0 {
		return
	}
	dst := c.dst(r)
	n := len(*dst)
	*dst = appendInterim(*dst, p)
	c.wrote(r, len(*dst)-n, 0)
}

// OnCancel: the worker closes the client connection at once (socket.destroy()).
func (r *Request) OnCancel(w *attach.Worker) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.link.Worker() == w {
		c.writeWhatIsQueued()
		c.destroyLocked()
	}
}

// OnResponse: a RESPONSE frame (checked).
func (r *Request) OnResponse(w *attach.Worker, p []byte) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batchW = w
	defer c.endBatch()
	r.onResponse(w, p, 0)
}

// onResponse: p's body goes on for rest more bytes, as pieces (stream.go).
func (r *Request) onResponse(w *attach.Worker, p []byte, rest int) {
	c := r.conn
	if r.link.Worker() != w || r.headSent {
		return
	}
	status := int(binary.LittleEndian.Uint16(p))
	flags := p[2]
	rlen := int(binary.LittleEndian.Uint16(p[8:]))
	bodyStart := 14 + rlen + int(binary.LittleEndian.Uint32(p[10+rlen:]))
	// (on a port a standalone server owns a 101 without OPAQUE is a response like any
	// other, as node writes it)
	if flags&wire.ResOpaque != 0 || (status == 101 && c.own == nil) {
		// A 101 switches the connection to the worker's protocol (tunnel.go): only as
		// the answer to a request that asked to upgrade, with the OPAQUE flag; so does a
		// 2xx to a CONNECT on a port a standalone server owns (its parser takes CONNECT
		// there only).
		if flags&wire.ResOpaque != 0 && r.upgrade && (status == 101 || (r.connect && status >= 200 && status < 300)) {
			c.startTunnel(r, p, bodyStart)
			return
		}
		w.SendAbort(r)
		r.respondLocal(501, opaque, true, "")
		return
	}
	r.headSent = true
	r.noBody = r.isHead || status < 200 || status == 204 || status == 304
	more := flags&wire.ResMore != 0
	// (KEEP_OPEN keeps a connection open only on a port a standalone server owns)
	asked := flags&wire.ResClose != 0 || (flags&wire.ResKeepOpen != 0 && c.own == nil)
	closing := r.mustClose(asked)
	r.close = closing
	add := addNone
	if flags&wire.ResHasConnection == 0 {
		if closing {
			add = addClose
		} else if r.versionMinor == 0 {
			add = addKeepAlive
		}
	} else if closing && !asked {
		// the worker said keep-alive and the router closes anyway: its Connection lines go
		add = addReplaceClose
	}
	body := p[bodyStart:]
	if ttl := binary.LittleEndian.Uint32(p[4:]); ttl != 0 {
		r.beginCapture(p, bodyStart, ttl)
	}
	ack := 0
	r.pieceMore = more
	if more {
		if r.noBody {
			if len(body) > 0 {
				w.SendWindow(r, len(body))
			}
		} else {
			ack = len(body)
		}
	} else if rest == 0 {
		r.finish()
	}
	dst := c.dst(r)
	n := len(*dst)
	// one allocation for the head and body, not append's growth from nothing on a
	// connection's first response (the head adds at most 27 bytes to the payload's)
	*dst = slices.Grow(*dst, len(p)+32)
	*dst = appendFromFrame(*dst, p, bodyStart, add)
	if !r.noBody {
		*dst = append(*dst, body...)
	}
	c.wrote(r, len(*dst)-n, ack)
	if !more && rest == 0 {
		c.done(r)
	}
}

// OnResBody: a RES_BODY frame.
func (r *Request) OnResBody(w *attach.Worker, flags byte, body []byte) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batchW = w
	defer c.endBatch()
	if r.link.Worker() != w || !r.headSent || r.resDone {
		return
	}
	if r.tunneled {
		c.tunnelFromWorker(r, flags, body)
		return
	}
	r.onResBody(w, flags, body, true)
}

// onResBody: body is the frame's last piece (stream.go), or all of it.
func (r *Request) onResBody(w *attach.Worker, flags byte, body []byte, last bool) {
	c := r.conn
	more := flags&wire.ResMore != 0 || !last
	if flags&wire.ResClose != 0 {
		r.close = true
	}
	if len(body) > 0 {
		if r.capture != nil && !r.capture.Append(body) {
			r.capture = nil
		}
		if r.noBody {
			if flags&wire.ResMore != 0 {
				w.SendWindow(r, len(body))
			}
		} else {
			ack := 0
			if flags&wire.ResMore != 0 {
				ack = len(body)
			}
			c.appendBody(r, body, len(body), ack)
		}
	}
	if !more {
		r.finish()
		c.done(r)
	}
}

// Lost: the worker went away holding the request (attach.Request).
func (r *Request) Lost(w *attach.Worker, unseen, requeue bool) bool {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.resDone || r.aborted.Load() || c.bodyErrLost(r) {
		return false
	}
	if unseen && requeue && !r.headSent {
		r.resetForRequeue()
		return true
	}
	switch {
	case r.headSent:
		c.destroyLocked()
	case unseen:
		r.respondLocal(503, noQueue, false, "")
	default:
		r.respondLocal(502, plain, false, "")
	}
	return false
}

// resetForRequeue: its worker died before acknowledging it; it is new again for the
// next worker, with the body bytes already sent kept for replay.
func (r *Request) resetForRequeue() {
	r.body.Requeue()
	r.dropRing()
}

// ---- the end of a request; under the connection's lock ----

// mustClose: whether the connection ends after this response.
func (r *Request) mustClose(asked bool) bool {
	c := r.conn
	if asked || !r.keepAlive || c.closing {
		return true
	}
	// the client half-closed and this is the last request it sent: the connection ends
	// after it (earlier ones must not close it: the requests behind them are answered)
	if c.readEnded && c.stopped && r.next == nil {
		return true
	}
	// the client waits for a 100 Continue that will never come: it may or may not send
	// the body, so the connection cannot be reused safely
	return !r.bodyDone && r.expect100 && r.continueState != continueSent
}

// finish: the response is complete, the worker is done with the request.
func (r *Request) finish() {
	r.resDone = true
	if cp := r.capture; cp != nil {
		r.capture = nil
		cp.Commit()
	}
	if w := r.link.Worker(); w != nil {
		w.Release(r, true)
	}
	r.heldDone()
	if !r.bodyDone {
		r.startDiscard()
	} else if r.body.Held != nil {
		// the app answered without reading all of the body: what is held goes, and the
		// blocks it was in go back to their pool (blocks.go)
		r.body.Drop()
		r.dropBlocks()
	}
}

func (r *Request) startDiscard() {
	r.discard = true
	r.body.Drop()
	r.dropBlocks()
	r.conn.resumeForBody(r)
}

// respondLocal: the router answers the request itself (400, 404, 413, 502, 503, ...).
func (r *Request) respondLocal(status int, v variant, closing bool, extra string) {
	if r.headSent {
		return
	}
	r.headSent = true
	r.resDone = true
	r.close = closing || r.mustClose(false)
	add := r.ownConnection()
	if !r.bodyDone {
		r.startDiscard()
	}
	c := r.conn
	dst := c.dst(r)
	n := len(*dst)
	*dst = appendLocal(*dst, status, v, r.isHead, add, c.srv.Clock.Date(), extra)
	c.wrote(r, len(*dst)-n, 0)
	c.done(r)
}

// ownConnection is the Connection header of a response the router makes itself.
func (r *Request) ownConnection() int {
	if r.close {
		return addClose
	}
	if r.versionMinor == 0 {
		return addKeepAlive
	}
	return addNone
}

// abort: the client connection is gone, or the router gives up on the request.
func (r *Request) abort() {
	if r.aborted.Load() {
		return
	}
	r.aborted.Store(true)
	r.withdraw()
	r.out = nil
}

// withdraw takes the request back from its queue or worker (the router answers it).
func (r *Request) withdraw() {
	if r.q != nil && !r.keepForApp() {
		r.q.Forget(r)
	}
	if w := r.link.Worker(); w != nil && !r.resDone {
		w.SendAbort(r)
	}
	r.body.Drop()
	r.dropBlocks()
}

func clone(b []byte) []byte {
	// append to nil, not to a make: Go zeroes what make allocates and then the copy
	// writes it all again (memclr was 5% of the router's 1 MB upload profile, the
	// chunks held for a replay before the worker acknowledged the request)
	return append([]byte(nil), b...)
}
