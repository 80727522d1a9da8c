package tlsstore

import (
	"container/list"
	"time"
)

// lru is a bounded map whose records expire: the client certificates this router
// verified (tls-store.js VERIFIED_MAX). A record lives as long as a session could and is
// renewed when read (a resumption issues new tickets); past the bound the least recently
// used goes, so a flood of distinct certificates cannot grow the router (an evicted one
// makes its next resumption a refusal, and the client's next connection a full handshake).
type lru struct {
	max   int
	ttl   time.Duration
	now   func() time.Time
	order *list.List // front: most recently used
	items map[string]*list.Element
}

type lruItem struct {
	key     string
	value   string
	expires time.Time
}

func newLRU(max int, ttl time.Duration, now func() time.Time) *lru {
	return &lru{max: max, ttl: ttl, now: now, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lru) set(key, value string) {
	exp := l.now().Add(l.ttl)
	if el, ok := l.items[key]; ok {
		it := el.Value.(*lruItem)
		it.value, it.expires = value, exp
		l.order.MoveToFront(el)
		return
	}
	l.items[key] = l.order.PushFront(&lruItem{key: key, value: value, expires: exp})
	for l.order.Len() > l.max {
		last := l.order.Back()
		l.order.Remove(last)
		delete(l.items, last.Value.(*lruItem).key)
	}
}

// get returns the value and renews the record, or false when absent or expired.
func (l *lru) get(key string) (string, bool) {
	el, ok := l.items[key]
	if !ok {
		return "", false
	}
	it := el.Value.(*lruItem)
	now := l.now()
	if now.After(it.expires) {
		l.order.Remove(el)
		delete(l.items, key)
		return "", false
	}
	it.expires = now.Add(l.ttl)
	l.order.MoveToFront(el)
	return it.value, true
}

func (l *lru) len() int { return l.order.Len() }
