package wire

// keepLarge: a buffer for frames larger than the read buffer, up to this size, is kept
// for the next one. A worker sends a response the app wrote at once in one frame (a
// 1 MB res.end(): a RESPONSE of 1 MB), its later bodies in frames of up to a response
// window; allocating each (a large-object allocation, zeroed, then garbage) cost 10%
// of the router's CPU in malloc and more in GC on 1 MB responses
// (bench/results/router-profile.md). A frame's payload is valid only until the next
// Next, so reusing the buffer changes nothing for the caller. Larger frames (up to
// MaxFrame) are allocated each time: what a worker connection keeps stays bounded.
const keepLarge = 2 << 20

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
