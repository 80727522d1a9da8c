package main

import (
	"runtime"
	"testing"
)

// The router takes half the CPUs it may use unless the operator set GOMAXPROCS.
func TestTheRouterSchedulesOnHalfTheCPUs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })

	t.Setenv("GOMAXPROCS", "")
	defaultProcs()
	if got, want := runtime.GOMAXPROCS(0), max(1, before/2); got != want {
		t.Fatalf("GOMAXPROCS %d with %d CPUs, want %d", got, before, want)
	}

	runtime.GOMAXPROCS(before)
	t.Setenv("GOMAXPROCS", "7")
	defaultProcs()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS set by the operator: %d, want it left at %d", got, before)
	}
}
