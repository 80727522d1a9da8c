package hub

import (
	"runtime"

	"httpsys/router/internal/control"
	"httpsys/router/internal/procstat"
)

// ProcessStats is processStats's answer: the router's own process, for its row in
// `httpsys ls` and `monit` (issue 25). The supervisor turns the CPU time into a share
// of one core over the last minute, as it does a worker's.
type ProcessStats struct {
	PID int `json:"pid"`
	procstat.Usage
	Goroutines int `json:"goroutines"`
}

func (h *Hub) registerProcess(ch *control.Channel) {
	ch.Handle("processStats", func(line []byte) (any, error) {
		var a control.Command
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return ProcessStats{PID: pid(), Usage: procstat.Read(), Goroutines: runtime.NumGoroutine()}, nil
	})
}
