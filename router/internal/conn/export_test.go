package conn

// BlocksOut: the connections' read blocks handed out and not given back (blocks.go).
func (s *Server) BlocksOut() int64 { return s.blocks.Out() }
