package main

import (
	"os"
	"runtime"
)

// defaultProcs sizes the Go scheduler when GOMAXPROCS is not in the environment: half
// the cores, at least one. The router shares the machine with its workers (node
// processes, one core each when busy), and its own work per request is two syscalls and
// a little parsing: with a P per core, the idle Ps spin looking for work (findRunnable,
// futex, epoll) and hand each request between threads, which costs more CPU than the
// request itself. Measured on 2 cores, keep-alive hello behind one worker
// (bench/results/router-profile.md): the router's CPU per request fell from 28-35 us
// with 2 Ps to about 18 us with 1, and the worker read 10-30 requests per read instead
// of 3-4. GOMAXPROCS set by the operator is kept as it is.
func defaultProcs() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	// GOMAXPROCS(0) is the runtime's default: the CPUs this process may use, within
	// its cgroup's CPU limit
	runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)/2))
}
