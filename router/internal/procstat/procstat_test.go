package procstat

import (
	"runtime"
	"testing"
	"time"
)

// The numbers ls shows for the router grow with its work and are its own process's.
func TestReadCountsThisProcess(t *testing.T) {
	before := Read()
	end := time.Now().Add(50 * time.Millisecond)
	n := 0
	for time.Now().Before(end) {
		n++
	}
	after := Read()
	if after.CPUMicros <= before.CPUMicros {
		t.Fatalf("cpuMicros did not grow over 50 ms of work: %d then %d (%d loops)", before.CPUMicros, after.CPUMicros, n)
	}
	if runtime.GOOS == "linux" && after.RSS < 1<<20 {
		t.Fatalf("rss %d: not this process's resident memory", after.RSS)
	}
}
