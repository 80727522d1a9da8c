//go:build race

package hub

// raceDetector: sync.Pool drops a share of what is put back under the race detector, so
// allocation counts say nothing there.
const raceDetector = true
