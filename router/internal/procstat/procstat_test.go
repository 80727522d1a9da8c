package procstat

import (
	"os"
	"runtime"
	"strconv"
	"strings"
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
	if (runtime.GOOS == "linux" || runtime.GOOS == "windows") && after.RSS < 1<<20 {
		t.Fatalf("rss %d: not this process's resident memory", after.RSS)
	}
}

// The resident memory is the VmRSS the supervisor reads of a worker's process.
func TestRSSIsVmRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc")
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	got := Read().RSS
	// the two reads are moments apart: within a MiB
	if d := got - kb*1024; kb == 0 || d > 1<<20 || d < -(1<<20) {
		t.Fatalf("rss %d, VmRSS %d kB", got, kb)
	}
}
