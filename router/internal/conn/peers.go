package conn

import (
	"sync"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/queue"
)

// Peer is a client connection served by another package (internal/h2: an HTTP/2
// connection) that the Server keeps beside its own: it shares the Server's ids (a
// worker's CONN_END and CONN_CLOSED name it), its count, the clock's sweep, a port's
// close and the router's shutdown.
type Peer interface {
	Port() int
	// Deadline is when Timeout is due (the clock's ms), 0 for none.
	Deadline() int64
	Timeout()
	// CloseWhenIdle: its port stopped listening (or a worker's CONN_END): no new
	// requests; it ends once those in flight are done.
	CloseWhenIdle()
	// Shutdown: the router closes; Destroy: what is left after the close timeout.
	Shutdown()
	Destroy()
	// EndBy is a worker's CONN_END: honoured only from a worker that had requests of it.
	EndBy(w *attach.Worker)
}

// peers is the Server's registry of Peers.
type peers struct {
	mu sync.Mutex
	m  map[uint32]Peer
}

// AddPeer registers p and returns its connection id; RemovePeer must follow once it
// is gone. ok is false when the router is closing (p must close at once).
func (s *Server) AddPeer(p Peer) (id uint32, ok bool) {
	if s.closing.Load() {
		return 0, false
	}
	id = s.nextID.Add(1)
	s.peers.mu.Lock()
	if s.peers.m == nil {
		s.peers.m = map[uint32]Peer{}
	}
	s.peers.m[id] = p
	s.peers.mu.Unlock()
	s.count.Add(1)
	return id, true
}

// RemovePeer: the connection registered as id is gone.
func (s *Server) RemovePeer(id uint32) {
	s.peers.mu.Lock()
	_, ok := s.peers.m[id]
	delete(s.peers.m, id)
	s.peers.mu.Unlock()
	if ok && s.count.Add(-1) == 0 && s.waiting.Load() {
		select {
		case s.gone <- struct{}{}:
		default:
		}
	}
}

func (s *Server) eachPeer(fn func(p Peer)) {
	s.peers.mu.Lock()
	list := make([]Peer, 0, len(s.peers.m))
	for _, p := range s.peers.m {
		list = append(list, p)
	}
	s.peers.mu.Unlock()
	for _, p := range list {
		fn(p)
	}
}

func (s *Server) peer(id uint32) Peer {
	s.peers.mu.Lock()
	defer s.peers.mu.Unlock()
	return s.peers.m[id]
}

// sweepPeers, peersPortClosed, endPeer, shutdownPeers and destroyPeers are the
// Server's Sweep, PortClosed, EndConnection and Shutdown for its Peers.
func (s *Server) sweepPeers(now int64) {
	s.eachPeer(func(p Peer) {
		if d := p.Deadline(); d != 0 && d <= now {
			p.Timeout()
		}
	})
}

func (s *Server) peersPortClosed(port int) {
	s.eachPeer(func(p Peer) {
		if p.Port() == port {
			p.CloseWhenIdle()
		}
	})
}

func (s *Server) endPeer(w *attach.Worker, id uint32) {
	if p := s.peer(id); p != nil {
		p.EndBy(w)
	}
}

// QueueAnswerer is a queued request of a Peer: QueueTimeout, QueueGone and AppDown
// (called by internal/hub) answer it through this (503 with the variant's page).
type QueueAnswerer interface {
	AnswerFromQueue(v Variant, closing bool)
}

func answerPeer(qr queue.Request, v variant, closing bool) {
	if a, ok := qr.(QueueAnswerer); ok {
		a.AnswerFromQueue(v, closing)
	}
}
