// Package procstat is what the router measures of its own process, for the row of its
// own in `httpsys ls` and `monit` (issue 25: "its memory and CPU show in ls/monit"): the
// CPU time it has used and its resident memory, read from the OS as the supervisor
// reads a worker's (src/supervisor/memory.js), so the numbers compare.
package procstat

// Usage is the process's CPU time and memory.
type Usage struct {
	// CPUMicros: user and system CPU time since the process started.
	CPUMicros int64 `json:"cpuMicros"`
	// RSS: resident memory in bytes; 0 where the OS has no cheap way to say (the
	// supervisor then asks ps, as for a worker).
	RSS int64 `json:"rss"`
}

// Read measures the calling process.
func Read() Usage {
	return Usage{CPUMicros: cpuMicros(), RSS: rss()}
}
