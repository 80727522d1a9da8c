//go:build unix

package procstat

import "syscall"

func cpuMicros() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano()/1000 + ru.Stime.Nano()/1000
}
