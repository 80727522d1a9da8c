package hub

// SpliceBodies has the workers that attach from now on splice large response bodies
// to their clients where the system can (Linux; internal/splice): the router's
// -splice option. Off by default: on this project's loopback benchmark the TCP side of
// splice(2) cost more CPU than the two copies it saves (bench/results/router-profile.md,
// "Splice"); a NIC's transmit path takes page references as it does for sendfile.
func (h *Hub) SpliceBodies(on bool) {
	h.mu.Lock()
	h.splice = on
	h.mu.Unlock()
}
