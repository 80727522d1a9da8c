package wire

// keepLarge: a buffer for frames larger than the read buffer up to this size is kept
// for the next one. A worker's body frames are at most its response window
// (ResponseWindow) plus a header: a 1 MB response is four such frames, and allocating
// each (a large-object allocation, zeroed, then garbage) cost 10% of the router's CPU
// in malloc and more in GC (bench/results/router-profile.md). A frame's payload is valid
// only until the next Next, so reusing the buffer changes nothing for the caller.
// Larger frames (up to MaxFrame) are rare and are not kept: the memory stays bounded.
const keepLarge = 2*ResponseWindow + HeaderSize + 64

// largeBuffer returns total bytes for a frame larger than the read buffer.
func (r *Reader) largeBuffer(total int) []byte {
	if total > keepLarge {
		return make([]byte, total)
	}
	if cap(r.large) < total {
		// grown to the next frame's size class at once: body frames vary a little in size
		r.large = make([]byte, min(keepLarge, max(total, 2*cap(r.large))))
	}
	return r.large[:total]
}
