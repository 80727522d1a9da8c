// Package splice moves a body from one socket to another through a pipe, without a
// copy into the router's memory (Linux splice(2); issue 25 "Bodies"). A Pipe belongs
// to one goroutine. Fill waits for its source; Drain never waits for its destination:
// what the destination does not take now stays in the pipe for the caller to Read, so
// one slow client never holds up the goroutine that feeds it (a worker's read loop,
// which carries every connection's frames).
package splice
