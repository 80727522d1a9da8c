package procstat

import (
	"os"
	"strconv"
	"strings"
)

// rss reads VmRSS from /proc/self/status, the field the supervisor reads of a worker.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.Index(s, "\nVmRSS:")
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+len("\nVmRSS:"):])
	if len(f) < 2 || f[1] != "kB" {
		return 0
	}
	kb, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}
