package procstat

import (
	"os"
	"strconv"
	"strings"
)

// rss reads the resident pages of /proc/self/statm: the VmRSS the supervisor reads of
// a worker (/proc/<pid>/status), from a file a tenth of the size (this runs every
// second while ls or monit watch).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
