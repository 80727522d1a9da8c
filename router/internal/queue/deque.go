package queue

// deque is a FIFO with cheap removal at the front and re-insertion at the front
// (a request its dead worker never saw goes back first).
type deque[T any] struct {
	items []T
	head  int
}

func (d *deque[T]) size() int { return len(d.items) - d.head }

func (d *deque[T]) push(x T) { d.items = append(d.items, x) }

func (d *deque[T]) unshift(x T) {
	if d.head > 0 {
		d.head--
		d.items[d.head] = x
		return
	}
	d.items = append(d.items, x)
	copy(d.items[1:], d.items)
	d.items[0] = x
}

func (d *deque[T]) peek() (T, bool) {
	if d.head >= len(d.items) {
		var zero T
		return zero, false
	}
	return d.items[d.head], true
}

func (d *deque[T]) shift() (T, bool) {
	var zero T
	if d.head >= len(d.items) {
		return zero, false
	}
	x := d.items[d.head]
	d.items[d.head] = zero
	d.head++
	if d.head == len(d.items) {
		d.items = d.items[:0]
		d.head = 0
	} else if d.head > 1024 && d.head*2 > len(d.items) {
		n := copy(d.items, d.items[d.head:])
		clear(d.items[n:])
		d.items = d.items[:n]
		d.head = 0
	}
	return x, true
}
