package hub

import (
	"strconv"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/control"
	"httpsys/router/internal/route"
)

// A config edit applied live (issue 28, `httpsys reload`; src/supervisor/reconfigure.js):
// an app's prefixes and its redirect_http change while its workers keep serving
// (setUrls and unroute, docs/router-control.md).

// URLChange is setUrls's arguments besides the name.
type URLChange struct {
	// Add: the config's new urls (port 0 binds a free port).
	Add []string `json:"add"`
	// Remove: prefixes as the queue holds them that the config dropped; one that Add
	// binds again stays.
	Remove []string `json:"remove"`
	// RedirectHTTP: the app's redirect_http port now (nil: none). Its redirects are
	// made again for the queue's https prefixes when they or it changed.
	RedirectHTTP *int `json:"redirectHttp"`
	// RedirectChanged: the config's redirect_http changed (the router knows only the
	// redirects it made, none for an app without https prefixes).
	RedirectChanged bool `json:"redirectChanged"`
}

// URLsSet is setUrls's answer.
type URLsSet struct {
	// URLs: the queue's prefixes now, as bound.
	URLs []string `json:"urls"`
	// Added: the prefix bound for each of Add, in its order.
	Added []string `json:"added"`
	// Redirects: the http prefixes that answer 308 now (nil: not made again).
	Redirects []string `json:"redirects"`
}

// SetURLs changes a queue's prefixes: the new ones are routed and their ports bound
// first, so a conflict or a port in use fails here with the queue as it was (the old
// prefixes kept, nothing bound); then the dropped ones leave the table and their ports
// (requests in flight on them finish; idle connections of a port no prefix uses any
// more are closed). Between the two, both route: no request finds neither.
func (h *Hub) SetURLs(name string, c URLChange) (URLsSet, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return URLsSet{}, err
	}
	e, ok := h.queues[name]
	if !ok {
		return URLsSet{}, notFound(name)
	}
	if e.unbind {
		// unrouted: on its way out, its prefixes are not routed again
		return URLsSet{}, coded.New(coded.QueueClosed, "the queue "+strconv.Quote(name)+" is unrouted", map[string]any{"queue": name})
	}
	before := len(e.urls)
	if err := h.registerURLs(e, c.Add); err != nil {
		return URLsSet{}, err
	}
	added := h.boundFor(c.Add, e.urls[before:])
	keep := map[string]bool{}
	for _, p := range added {
		keep[p] = true
	}
	dropped := 0
	for _, u := range c.Remove {
		if keep[u] {
			continue
		}
		i := indexOf(e.urls, u)
		if i < 0 {
			continue
		}
		if p, err := route.Parse(u, false); err == nil {
			h.table.Remove(p)
		}
		h.listeners.Release(e.ports[i], e.ips[i])
		e.urls = append(e.urls[:i], e.urls[i+1:]...)
		e.ports = append(e.ports[:i], e.ports[i+1:]...)
		e.ips = append(e.ips[:i], e.ips[i+1:]...)
		dropped++
	}
	if dropped > 0 {
		// what a first instance's listen() claimed is the supervisor's to change now
		e.claim = ""
	}
	out := URLsSet{URLs: append([]string{}, e.urls...), Added: added}
	if len(c.Add) == 0 && dropped == 0 && !c.RedirectChanged {
		return out, nil
	}
	// the redirects follow the https prefixes
	h.removeRedirects(name)
	out.Redirects = []string{}
	if c.RedirectHTTP == nil {
		return out, nil
	}
	redirects, err := h.addRedirect(name, *c.RedirectHTTP, out.URLs)
	if err != nil {
		return URLsSet{}, err
	}
	out.Redirects = redirects
	return out, nil
}

// boundFor is the prefix each of urls is served by: a fixed port's is its normal form
// (bound now or before), a port 0's the next of fresh (what this change bound) that no
// fixed one names.
func (h *Hub) boundFor(urls []string, fresh []string) []string {
	parsed := make([]route.Prefix, len(urls))
	fixed := map[string]bool{}
	for i, u := range urls {
		parsed[i], _ = route.Parse(u, true) // registerURLs parsed them all
		if parsed[i].Port != 0 {
			fixed[parsed[i].Prefix] = true
		}
	}
	var zero []string
	for _, f := range fresh {
		if !fixed[f] {
			zero = append(zero, f)
		}
	}
	out := make([]string, len(urls))
	for i, p := range parsed {
		switch {
		case p.Port != 0:
			out[i] = p.Prefix
		case len(zero) > 0:
			out[i], zero = zero[0], zero[1:]
		}
	}
	return out
}

// Unroute: the app leaves the config; its prefixes and redirects go first, so no new
// request reaches it while its workers answer what waits.
func (h *Hub) Unroute(name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.queues[name]
	if !ok {
		return notFound(name)
	}
	h.unroute(e)
	h.removeRedirects(name)
	return nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// ---- commands (docs/router-control.md) ----------------------------------------------

type setURLsCmd struct {
	control.Command
	Name string `json:"name"`
	URLChange
}

func (h *Hub) registerURLCommands(ch *control.Channel) {
	ch.Handle("setUrls", func(line []byte) (any, error) {
		var a setURLsCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return h.SetURLs(a.Name, a.URLChange)
	})
	ch.Handle("unroute", func(line []byte) (any, error) {
		var a nameCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return nil, h.Unroute(a.Name)
	})
}
