// Package attach is the router's end of the worker wire (docs/wire-protocol.md): one
// Worker per worker connection on the router's Unix socket. It decodes the worker's
// frames on the connection's own
// goroutine, appends frames for the worker to one wire.Writer that a second goroutine
// writes in batches (one writev for everything appended meanwhile), and tracks the
// requests the worker holds in a slot table: the wire id is slot | generation << 20,
// so a late frame for a finished request never reaches the slot's next occupant.
//
// Locks: a Worker's lock guards its own state and the worker-side fields of the
// requests it holds (Link). It is taken inside a queue's lock and inside a client
// connection's lock, never around them: the frames it reads are handed to the
// requests with no worker lock held.
package attach

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"httpsys/router/internal/queue"
	"httpsys/router/internal/splice"
	"httpsys/router/internal/wire"
)

const (
	slotBits = 20
	slotMask = 1<<slotBits - 1
	genMask  = 0xfff
	// ackStep: WINDOW credit goes back in steps of at least this, an eighth of the
	// worker's response window, not per client write (a stream of small WebSocket or SSE
	// messages would otherwise cost a WINDOW frame each)
	ackStep = wire.ResponseWindow / 8
	// maxWindow caps the receive window a worker asks for in HELLO
	maxWindow  = 65536
	readBuffer = 64 << 10
)

// Link is a request's worker-side state, embedded in the request. Worker() is read by
// anyone; the rest belongs to the worker's lock.
type Link struct {
	worker     atomic.Pointer[Worker]
	seen       atomic.Bool // the worker acknowledged its REQUEST (its body replay can go)
	tellSeen   atomic.Bool // the request's OnSeen runs at that ACK (TellSeen)
	id         uint32
	seq        uint64
	ackPending int
}

// Worker is the worker the request is dispatched to, or nil.
func (l *Link) Worker() *Worker { return l.worker.Load() }

// TellSeen asks for the request's OnSeen (SeenWaiter) when its worker acknowledges its
// REQUEST. Only a request with a body hears of it (the ACK is tracked for those, whose
// replay is kept), and not once its worker released it. The caller checks Seen()
// after it: the ACK may have come just before.
func (l *Link) TellSeen() { l.tellSeen.Store(true) }

// SeenWaiter is a request that hears of its REQUEST's ACK (TellSeen). The worker ACKs
// a read after its handlers ran (docs/wire-protocol.md "Flow control"), so what its
// app wrote then came before the ACK and was handled already.
type SeenWaiter interface {
	OnSeen(w *Worker)
}

// Seen is whether the worker acknowledged the request's REQUEST frame.
func (l *Link) Seen() bool { return l.seen.Load() }

// Request is a client request as a worker connection handles it.
type Request interface {
	queue.Request
	Link() *Link
	// HasBody: BODY frames follow the REQUEST (its replay is kept until the ACK)
	HasBody() bool
	// AppendRequest appends the REQUEST frame (under the worker's lock: no other lock)
	AppendRequest(wr *wire.Writer, id uint32)
	// AppendBodyEnd appends BODY_END with the request's trailers
	AppendBodyEnd(wr *wire.Writer, id uint32)

	// The worker's frames for the request, on the worker's goroutine, no worker lock
	// held; payloads are views valid during the call only, and checked already.
	OnResponse(w *Worker, payload []byte)
	OnResBody(w *Worker, flags byte, body []byte)
	OnRead(w *Worker, n uint32)
	OnContinue(w *Worker)
	OnInfo(w *Worker, payload []byte)
	OnCancel(w *Worker)
	// Dispatched: a queue's pump gave the request to w (it may be done with it already);
	// its body may flow now
	Dispatched(w *Worker)
	// Lost: w went away holding the request. unseen: w never acknowledged it. With
	// requeue, a request nobody answered yet becomes new again and Lost returns true
	// (the caller puts it back in its queue); otherwise it is answered (503 unseen, 502
	// seen, or its connection closed when the response had begun). Lost(nil, true,
	// false): a request Lost made new again could not go back (its queue went): 503.
	Lost(w *Worker, unseen, requeue bool) bool
}

// Hello is a worker's HELLO (docs/wire-protocol.md "Lifecycle").
type Hello struct {
	Queue  string          `json:"queue"`
	URLs   []string        `json:"urls"`
	PID    int             `json:"pid"`
	Window int             `json:"window"`
	Token  string          `json:"token"`
	TLS    json.RawMessage `json:"tls"`
}

// Welcome is HELLO_OK's content: the queue as bound, port 0 resolved.
type Welcome struct {
	Queue string   `json:"queue"`
	URLs  []string `json:"urls"`
	Ports []int    `json:"ports"`
}

// CodedError is an admission error as HELLO_ERR carries it: the worker rebuilds the
// error of src/errors.js with that code from Details.
type CodedError interface {
	error
	ErrorCode() string
	ErrorDetails() map[string]any
}

// Hub is what a Worker needs from the router.
type Hub interface {
	// Hello admits the worker to a queue (docs/wire-protocol.md "Lifecycle": the queue
	// rules) or refuses it.
	Hello(w *Worker, h *Hello) (*queue.Queue, Welcome, error)
	// Attached: the worker's first ACK came (HELLO_OK reached it, its attach() resolved):
	// requests are dispatched to it from now on.
	Attached(w *Worker)
	// Detached: the worker asked for no new requests (reason "detach") or left.
	Detached(w *Worker, reason string)
	// Closed: the connection is gone and the worker's requests were handled.
	Closed(w *Worker)
	// EndConnection: CONN_END for a client connection.
	EndConnection(w *Worker, connID uint32)
}

// Worker is one worker connection.
type Worker struct {
	ID uint64
	// SpliceBodies: large response bodies are spliced to their clients (stream.go); set
	// before Serve
	SpliceBodies bool
	hub          Hub
	log          *slog.Logger
	nc           net.Conn

	pid   atomic.Int64
	queue atomic.Pointer[queue.Queue]

	wake chan struct{}
	done chan struct{}

	// batches swapped out for writing, and the last one written (or given up): what
	// SendBodyHeld referenced is free again once Written passes its batch (copy.go)
	batches atomic.Uint64
	written atomic.Uint64

	mu          sync.Mutex
	out, spare  *wire.Writer
	copies      wire.CopyPool // upload chunks copied for out and spare (wire.BodyCopy)
	flushQueued bool
	finQueued   bool // a CONN_FIN waits in out: written without waiting for more frames (connfin.go)
	endAfter    bool // end the socket once what is queued is written
	slots       []Request
	gens        []uint16
	free        []uint32
	acks        wire.AckWindow
	seqSent     uint64 // REQUEST frames sent: the last one's sequence number
	window      uint64
	helloSeen   bool
	attached    bool
	ready       bool // its first ACK came: nothing is dispatched before it
	readySaid   bool // Hub.Attached was called
	detaching   bool
	detachSaid  bool
	closed      bool
	closeReason string
	inFlight    int
	served      uint64
	unacked     []Request // dispatched with a body, until acknowledged

	batch      []Flusher // the read goroutine's own: connections to write once the read is handled
	flushHolds int       // HoldFlush calls not released yet (connframes.go)

	// the read goroutine's own: the pipe response bodies are spliced through (stream.go)
	pipe   *splice.Pipe
	raw    syscall.RawConn
	noPipe bool
}

// Flusher is a client connection that appended response bytes while the worker's
// frames of one read were handled (DeferFlush).
type Flusher interface {
	// FlushBatch writes what the connection holds for its socket.
	FlushBatch()
}

// New returns a Worker for a connection; Serve runs it.
func New(id uint64, nc net.Conn, hub Hub, log *slog.Logger) *Worker {
	w := &Worker{
		ID: id, nc: nc, hub: hub, log: log,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		out: wire.NewWriter(4096), spare: wire.NewWriter(4096),
		window: wire.DefaultReceiveWindow,
	}
	// upload chunks are copied in pieces of this size
	w.copies.Size = copyChunk
	if uc, ok := nc.(*net.UnixConn); ok {
		_ = uc.SetWriteBuffer(sendBuffer)
	}
	w.out.Copies, w.spare.Copies = &w.copies, &w.copies
	return w
}

// PID is the worker's process id from its HELLO (0 before).
func (w *Worker) PID() int { return int(w.pid.Load()) }

// Queue is the queue the worker attached to, or nil.
func (w *Worker) Queue() *queue.Queue { return w.queue.Load() }

// Serve reads the worker's frames until its connection ends, then hands back what it
// held (Hub.Closed last). It returns when the connection is done.
func (w *Worker) Serve() {
	go w.flushLoop()
	err := w.readLoop()
	w.flushBatch()
	w.onClose(err)
}

func (w *Worker) readLoop() error {
	r := wire.NewReader(w.nc, readBuffer)
	if splice.Supported && w.SpliceBodies {
		r.StreamBodies(streamFrom)
	}
	defer w.closePipe()
	for {
		f, err := r.Next()
		if err != nil {
			return err
		}
		if f.Rest > 0 {
			err = w.streamed(r, f)
		} else {
			err = w.frame(f)
		}
		if err != nil {
			return err
		}
		for {
			f, ok, err := r.NextBuffered()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if err := w.frame(f); err != nil {
				return err
			}
		}
		w.flushBatch()
	}
}

// DeferFlush: f writes its socket once every frame of the worker's current read is
// handled, so the responses one read carries for one client connection (pipelined
// requests) leave in one write, not one each. Only inside a Request's On* call, on
// the worker's read goroutine, which owns the list.
func (w *Worker) DeferFlush(f Flusher) { w.batch = append(w.batch, f) }

func (w *Worker) flushBatch() {
	for i, f := range w.batch {
		f.FlushBatch()
		w.batch[i] = nil
	}
	w.batch = w.batch[:0]
}

// errDropped ends the read loop after the worker was dropped or refused.
var errDropped = errors.New("worker dropped")

func (w *Worker) frame(f wire.Frame) error {
	if err := wire.CheckFromWorker(f); err != nil {
		return w.fail(err)
	}
	switch f.Type {
	case wire.TypeResponse:
		if r := w.lookup(f.ID); r != nil {
			r.OnResponse(w, f.Payload)
		}
	case wire.TypeResBody:
		if r := w.lookup(f.ID); r != nil {
			r.OnResBody(w, f.Payload[0], f.Payload[1:])
		}
	case wire.TypeAck:
		n, _ := f.U32()
		return w.onAck(n)
	case wire.TypeRead:
		if r := w.lookup(f.ID); r != nil {
			n, _ := f.U32()
			r.OnRead(w, n)
		}
	case wire.TypeContinue:
		if r := w.lookup(f.ID); r != nil {
			r.OnContinue(w)
		}
	case wire.TypeInfo:
		if r := w.lookup(f.ID); r != nil {
			r.OnInfo(w, f.Payload)
		}
	case wire.TypeCancel:
		if r := w.lookup(f.ID); r != nil {
			r.OnCancel(w)
		}
	case wire.TypeConnEnd:
		w.hub.EndConnection(w, f.ID)
	case wire.TypeConnFin, wire.TypeConnWrite, wire.TypeConnDestroy, wire.TypeConnIdle:
		w.connFrame(f)
	case wire.TypeDetach:
		w.mu.Lock()
		w.detaching = true
		w.out.Empty(wire.TypeDetachOK, 0)
		w.schedule()
		w.mu.Unlock()
		w.detached("detach")
	case wire.TypeHello:
		return w.onHello(f)
	}
	return nil
}

func (w *Worker) lookup(id uint32) Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	slot := id & slotMask
	if int(slot) >= len(w.slots) {
		return nil
	}
	r := w.slots[slot]
	if r == nil || r.Link().id != id {
		return nil
	}
	return r
}

func (w *Worker) onAck(n uint32) error {
	w.mu.Lock()
	more, err := w.acks.Ack(n)
	if err != nil {
		w.mu.Unlock()
		return w.fail(err)
	}
	say := false
	var told []Request
	if !w.ready {
		w.ready = w.attached
		say = w.ready && !w.readySaid
		w.readySaid = w.readySaid || say
	}
	if more > 0 {
		acked := w.seqSent - w.acks.InFlight()
		k := 0
		for k < len(w.unacked) && w.unacked[k].Link().seq <= acked {
			l := w.unacked[k].Link()
			l.seen.Store(true)
			if l.tellSeen.CompareAndSwap(true, false) {
				told = append(told, w.unacked[k])
			}
			w.unacked[k] = nil
			k++
		}
		if k > 0 {
			n := copy(w.unacked, w.unacked[k:])
			w.unacked = w.unacked[:n]
		}
	}
	q := w.queue.Load()
	w.mu.Unlock()
	for _, r := range told {
		if s, ok := r.(SeenWaiter); ok {
			s.OnSeen(w)
		}
	}
	if say {
		w.hub.Attached(w)
	}
	if q != nil {
		w.pump(q)
	}
	return nil
}

func (w *Worker) onHello(f wire.Frame) error {
	w.mu.Lock()
	if w.helloSeen {
		w.mu.Unlock()
		return w.fail(&wire.ProtocolError{Reason: "HELLO sent twice"})
	}
	w.helloSeen = true
	w.mu.Unlock()
	version, js, _ := f.JSON()
	var h Hello
	_ = json.Unmarshal(js, &h)
	w.pid.Store(int64(h.PID))
	if version != wire.Version {
		reason := "the worker speaks protocol version " + strconv.Itoa(version) + ", the router version " + strconv.Itoa(wire.Version)
		w.log.Warn("worker protocol mismatch", "pid", h.PID, "reason", reason)
		w.refuse(wire.Code, "", map[string]any{"reason": reason})
		return errDropped
	}
	q, welcome, err := w.hub.Hello(w, &h)
	if err != nil {
		code, details := wire.Code, map[string]any{}
		var ce CodedError
		if errors.As(err, &ce) {
			code, details = ce.ErrorCode(), ce.ErrorDetails()
		}
		w.refuse(code, err.Error(), details)
		return errDropped
	}
	js, _ = json.Marshal(struct {
		Welcome
		WorkerID uint64 `json:"workerId"`
	}{welcome, w.ID})
	w.mu.Lock()
	if h.Window > 0 {
		w.window = uint64(min(h.Window, maxWindow))
	}
	w.attached = true
	w.queue.Store(q)
	_ = w.out.JSON(wire.TypeHelloOK, 0, js)
	w.schedule()
	w.mu.Unlock()
	// (Hub.Attached follows its first ACK: the supervisor counts an instance ready, and
	// a test or a rolling reload sends it requests, only once it can take them)
	q.AddWorker(w)
	return nil
}

// refuse answers HELLO_ERR and ends the connection.
func (w *Worker) refuse(code, message string, details map[string]any) {
	js, _ := json.Marshal(map[string]any{"code": code, "message": message, "details": details})
	// written now, on the reader's goroutine: the connection closes as soon as it
	// returns (nothing else was written to a worker that never attached)
	w.mu.Lock()
	_ = w.out.JSON(wire.TypeHelloErr, 0, js)
	_, _ = w.out.WriteTo(w.nc)
	w.mu.Unlock()
	closeWrite(w.nc)
}

func closeWrite(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// fail: the worker broke the protocol. It is dropped as if it had died (what it
// acknowledged and did not answer gets 502, the rest goes back to the queue).
func (w *Worker) fail(err error) error {
	q := w.queue.Load()
	name := ""
	if q != nil {
		name = q.Name
	}
	w.log.Warn("worker broke the router protocol; dropping it", "err", err, "code", wire.Code, "workerId", w.ID, "pid", w.PID(), "queue", name)
	w.mu.Lock()
	w.closeReason = "protocol"
	w.ready = false
	w.mu.Unlock()
	_ = w.nc.Close()
	return errDropped
}

// CloseByHub ends the worker (its queue was deleted, the router closes): CLOSE, then
// the socket's end once written.
func (w *Worker) CloseByHub(reason string) {
	js, _ := json.Marshal(map[string]string{"code": "ERR_HTTPSYS_QUEUE_CLOSED", "reason": reason})
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.closeReason == "" {
		w.closeReason = reason
	}
	_ = w.out.JSON(wire.TypeClose, 0, js)
	w.endAfter = true
	w.schedule()
}

// Destroy closes the connection at once.
func (w *Worker) Destroy() { _ = w.nc.Close() }

// Done is closed once the worker's connection is gone and its requests handled.
func (w *Worker) Done() <-chan struct{} { return w.done }

func (w *Worker) detached(reason string) {
	w.mu.Lock()
	say := w.attached && !w.detachSaid
	w.detachSaid = true
	w.mu.Unlock()
	if say {
		w.hub.Detached(w, reason)
	}
}

// ---- queue.Worker ------------------------------------------------------------

// CanTake: attached, its first ACK in, not detaching, within its receive window.
func (w *Worker) CanTake() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.canTake()
}

func (w *Worker) canTake() bool {
	return w.ready && !w.detaching && !w.closed && w.acks.InFlight() < w.window && (len(w.free) > 0 || len(w.slots) <= slotMask)
}

// Load is the requests in flight.
func (w *Worker) Load() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inFlight
}

// TryDispatch sends the REQUEST frame of qr if the worker can take it.
func (w *Worker) TryDispatch(qr queue.Request) bool {
	r := qr.(Request)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.canTake() {
		return false
	}
	var slot uint32
	if n := len(w.free); n > 0 {
		slot = w.free[n-1]
		w.free = w.free[:n-1]
	} else {
		slot = uint32(len(w.slots))
		w.slots = append(w.slots, nil)
		w.gens = append(w.gens, 0)
	}
	id := uint32(w.gens[slot])<<slotBits | slot
	w.slots[slot] = r
	l := r.Link()
	l.id = id
	w.acks.Sent()
	w.seqSent++
	l.seq = w.seqSent
	l.ackPending = 0
	l.seen.Store(false)
	w.inFlight++
	if r.HasBody() {
		w.unacked = append(w.unacked, r)
	}
	r.AppendRequest(w.out, id)
	w.schedule()
	l.worker.Store(w)
	return true
}

// pump runs q's pump and tells each request it dispatched that it went: done here,
// with no lock held, since a request's Dispatched takes its connection's lock.
func (w *Worker) pump(q *queue.Queue) {
	for _, d := range q.Pump() {
		d.R.(Request).Dispatched(d.W.(*Worker))
	}
}

// ---- frames for the worker (called by requests, under their connection's lock) ----

// holds reports whether r is in flight here; under the lock.
func (w *Worker) holds(r Request) bool {
	l := r.Link()
	slot := l.id & slotMask
	return l.worker.Load() == w && int(slot) < len(w.slots) && w.slots[slot] == r
}

// SendBody appends a BODY frame. chunk is referenced until written (4 KiB and more):
// it must not change.
func (w *Worker) SendBody(r Request, chunk []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.holds(r) {
		return
	}
	_ = w.out.Body(r.Link().id, chunk)
	w.schedule()
}

// SendBodyEnd appends BODY_END with r's trailers.
func (w *Worker) SendBodyEnd(r Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.holds(r) {
		return
	}
	r.AppendBodyEnd(w.out, r.Link().id)
	w.schedule()
}

// SendAbort appends ABORT (the client went away, or the router answers the request
// itself) and releases r.
func (w *Worker) SendAbort(r Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.holds(r) {
		return
	}
	if !w.closed {
		w.out.Empty(wire.TypeAbort, r.Link().id)
		w.schedule()
	}
	w.release(r, false)
}

// SendWindow returns n bytes of r's response window: the client took them. In steps
// of ackStep (docs/wire-protocol.md "Flow control": a stream of small writes costs no
// WINDOW frame each).
func (w *Worker) SendWindow(r Request, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.holds(r) {
		return
	}
	l := r.Link()
	l.ackPending += n
	if l.ackPending < ackStep {
		return
	}
	w.out.U32(wire.TypeWindow, l.id, uint32(l.ackPending))
	l.ackPending = 0
	w.schedule()
}

// SendConnClosed tells the worker that a client connection it had requests of closed.
func (w *Worker) SendConnClosed(connID uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.out.Empty(wire.TypeConnClosed, connID)
	w.schedule()
}

// Release: r left the worker (its response is complete: completed, or it was aborted).
func (w *Worker) Release(r Request, completed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holds(r) {
		w.release(r, completed)
	}
}

func (w *Worker) release(r Request, completed bool) {
	l := r.Link()
	slot := l.id & slotMask
	w.slots[slot] = nil
	w.gens[slot] = (w.gens[slot] + 1) & genMask
	w.free = append(w.free, slot)
	w.inFlight--
	l.worker.Store(nil)
	if completed {
		w.served++
		if q := w.queue.Load(); q != nil {
			q.Served()
		}
	}
	if r.HasBody() && !l.seen.Load() {
		for i, x := range w.unacked {
			if x == r {
				w.unacked = append(w.unacked[:i], w.unacked[i+1:]...)
				break
			}
		}
	}
}

// Stats is a worker's line in queueStats.
type Stats struct {
	ID       uint64 `json:"id"`
	PID      int    `json:"pid"`
	InFlight int    `json:"inFlight"`
	Served   uint64 `json:"served"`
}

// Stats reads the worker's counters.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{ID: w.ID, PID: w.PID(), InFlight: w.inFlight, Served: w.served}
}

// ---- writing ------------------------------------------------------------------

// queued: the bytes waiting to be written, and whether a CONN_FIN is among them
// (finQueued: it is written without waiting for more).
func (w *Worker) queued() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Len(), w.finQueued
}

// schedule wakes the writer; under the lock.
func (w *Worker) schedule() {
	if w.flushQueued {
		return
	}
	w.flushQueued = true
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Worker) flushLoop() {
	for {
		select {
		case <-w.done:
			// the worker is gone: the batch no write will take lets go of the blocks
			// and pooled buffers its BODY frames reference, and of the bytes they
			// reference (Written: given up on). Nothing appends to a closed worker's.
			w.mu.Lock()
			w.out.Discard()
			w.written.Store(w.batches.Add(1))
			w.mu.Unlock()
			return
		case <-w.wake:
		}
		// the client goroutines woken with this one append their REQUEST frames first,
		// as long as more keep coming: a burst of requests goes to the worker in one
		// write, and the worker's process handles it in one read (docs/wire-protocol.md
		// "Frames": one write per batch, as the worker writes one per tick)
		// (not behind a CONN_FIN: connfin.go)
		n, fin := w.queued()
		for tries := 0; !fin && tries < 4; tries++ {
			runtime.Gosched()
			m, f := w.queued()
			if m == n {
				break
			}
			n, fin = m, f
		}
		w.mu.Lock()
		if w.flushHolds > 0 {
			// a client connection is reading one batch of requests for it
			// (HoldFlush): they go in one write, once it has
			w.mu.Unlock()
			continue
		}
		out := w.out
		w.out, w.spare = w.spare, out
		w.flushQueued = false
		w.finQueued = false
		end := w.endAfter
		batch := w.batches.Add(1)
		w.mu.Unlock()
		if out.Len() > 0 {
			_, err := out.WriteTo(w.nc)
			w.written.Store(batch)
			if err != nil {
				_ = w.nc.Close()
				continue
			}
		} else {
			w.written.Store(batch)
		}
		if end {
			closeWrite(w.nc)
		}
	}
}

// ---- the end ----------------------------------------------------------------------

// onClose: the connection is gone. Requests the worker never acknowledged go back to
// the front of their queue, in order (it never saw them: nothing is lost); requests it
// saw and did not answer get 502, or lose their connection when the response had begun.
func (w *Worker) onClose(err error) {
	_ = w.nc.Close()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.ready = false
	if w.closeReason == "" {
		w.closeReason = "disconnect"
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errDropped) && !errors.Is(err, net.ErrClosed) {
			w.closeReason = "error"
		}
	}
	// in dispatch order
	held := make([]Request, 0, w.inFlight)
	for _, r := range w.slots {
		if r != nil {
			held = append(held, r)
		}
	}
	sortBySeq(held)
	acked := w.seqSent - w.acks.InFlight()
	unseen := make([]bool, len(held))
	for i, r := range held {
		l := r.Link()
		unseen[i] = l.seq > acked
		l.worker.Store(nil)
	}
	w.inFlight = 0
	reason := w.closeReason
	attached := w.attached
	w.mu.Unlock()
	close(w.done)

	q := w.queue.Load()
	if q != nil {
		q.RemoveWorker(w)
	}
	gone := q == nil || q.Deleted()
	requeued := 0
	for i := len(held) - 1; i >= 0; i-- {
		r := held[i]
		if r.Lost(w, unseen[i], !gone) {
			if q.RequeueFront(r) {
				requeued++
			} else {
				r.Lost(nil, true, false)
			}
		}
	}
	w.mu.Lock()
	for i := range w.slots {
		w.slots[i] = nil
	}
	w.unacked = nil
	w.mu.Unlock()
	if len(held) > 0 {
		name := ""
		if q != nil {
			name = q.Name
		}
		w.log.Warn("worker left with requests in flight", "queue", name, "pid", w.PID(), "requeued", requeued, "failed", len(held)-requeued)
	}
	if attached {
		w.detached(reason)
	}
	w.hub.Closed(w)
	if q != nil && !gone {
		w.pump(q)
	}
}

func sortBySeq(rs []Request) {
	// insertion sort: a worker's in-flight list is short and mostly in order already
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Link().seq < rs[j-1].Link().seq; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}
