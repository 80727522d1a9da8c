package hub

import (
	"errors"
	"net"
	"reflect"
	"strconv"
	"testing"
	"time"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/route"
)

func urlsOf(t *testing.T, h *Hub, name string) []string {
	t.Helper()
	s, err := h.QueueStats(name)
	if err != nil {
		t.Fatal(err)
	}
	return s.URLs
}

func listening(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

func routes(t *testing.T, h *Hub, prefix string) bool {
	t.Helper()
	p, err := route.Parse(prefix, false)
	if err != nil {
		t.Fatal(err)
	}
	return h.table.Has(p)
}

// A config edit (issue 28) that cannot be applied changes nothing: a conflict is found
// before anything binds, and the queue keeps the prefixes it had.
func TestSetURLsRefusesAConflictAndKeepsTheOldPrefixes(t *testing.T) {
	h, _ := startHub(t, false, nil)
	a, err := h.CreateQueue("a", QueueOptions{URLs: []string{"http://127.0.0.1:0/a/"}})
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.Itoa(a.Ports[0])
	if _, err := h.CreateQueue("b", QueueOptions{URLs: []string{"http://127.0.0.1:" + p + "/b/"}}); err != nil {
		t.Fatal(err)
	}
	ports := len(h.listeners.Ports())
	_, err = h.SetURLs("a", URLChange{Add: []string{"http://127.0.0.1:0/new/", "http://127.0.0.1:" + p + "/b/"}, Remove: []string{"http://127.0.0.1:" + p + "/a/"}})
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != coded.URLConflict || ce.Details["owner"] != "b" {
		t.Fatalf("got %v, want ERR_HTTPSYS_URL_CONFLICT naming b", err)
	}
	if got := urlsOf(t, h, "a"); !reflect.DeepEqual(got, []string{"http://127.0.0.1:" + p + "/a/"}) {
		t.Fatalf("a's prefixes after a refused edit: %v", got)
	}
	if !routes(t, h, "http://127.0.0.1:"+p+"/a/") || len(h.listeners.Ports()) != ports {
		t.Fatalf("the refused edit left a trace: a routed %v, ports %v (had %d)", routes(t, h, "http://127.0.0.1:"+p+"/a/"), h.listeners.Ports(), ports)
	}
}

// The new prefixes come first and the dropped ones go after; a port no prefix uses any
// more stops listening, one another queue shares goes on.
func TestSetURLsMovesAQueueAndReleasesWhatItLeft(t *testing.T) {
	h, _ := startHub(t, false, nil)
	a, err := h.CreateQueue("a", QueueOptions{URLs: []string{"http://127.0.0.1:0/"}})
	if err != nil {
		t.Fatal(err)
	}
	old := "http://127.0.0.1:" + strconv.Itoa(a.Ports[0]) + "/"
	res, err := h.SetURLs("a", URLChange{Add: []string{"http://127.0.0.1:0/x/"}, Remove: []string{old}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 1 || !reflect.DeepEqual(res.URLs, res.Added) || res.Added[0] == "" {
		t.Fatalf("answer %+v: want the one new prefix, bound", res)
	}
	p, _ := route.Parse(res.Added[0], false)
	if !listening(p.Port) || listening(a.Ports[0]) || routes(t, h, old) {
		t.Fatalf("new port listening %v, old port listening %v, old prefix routed %v", listening(p.Port), listening(a.Ports[0]), routes(t, h, old))
	}
	// the same prefix said another way is kept, not dropped and bound again
	same := "http://127.0.0.1:" + strconv.Itoa(p.Port) + "/x"
	res, err = h.SetURLs("a", URLChange{Add: []string{same}, Remove: []string{res.Added[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.URLs, []string{p.Prefix}) || !reflect.DeepEqual(res.Added, []string{p.Prefix}) || !routes(t, h, p.Prefix) {
		t.Fatalf("answer %+v: want %s kept", res, p.Prefix)
	}
}

// redirect_http follows the https prefixes: made again when they change, gone with it.
func TestSetURLsRemakesTheRedirects(t *testing.T) {
	h, _ := startHub(t, false, nil)
	if _, err := h.CreateQueue("s", QueueOptions{URLs: []string{"https://localhost:0/"}}); err != nil {
		t.Fatal(err)
	}
	plain, err := h.listeners.AcquireFree("", false)
	if err != nil {
		t.Fatal(err)
	}
	h.listeners.Release(plain, "")
	res, err := h.SetURLs("s", URLChange{RedirectHTTP: &plain, RedirectChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "http://localhost:" + strconv.Itoa(plain) + "/"
	if !reflect.DeepEqual(res.Redirects, []string{want}) || !routes(t, h, want) || !listening(plain) {
		t.Fatalf("answer %+v: want %s redirecting", res, want)
	}
	if res, err = h.SetURLs("s", URLChange{RedirectChanged: true}); err != nil || len(res.Redirects) != 0 {
		t.Fatalf("answer %+v, %v", res, err)
	}
	if routes(t, h, want) || listening(plain) {
		t.Fatalf("the redirect outlived redirect_http")
	}
}

// An app on its way out (unroute, then deleteQueue) is not routed again by a late edit.
func TestAnUnroutedQueueTakesNoPrefixes(t *testing.T) {
	h, _ := startHub(t, false, nil)
	a, err := h.CreateQueue("a", QueueOptions{URLs: []string{"http://127.0.0.1:0/"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Unroute("a"); err != nil {
		t.Fatal(err)
	}
	if listening(a.Ports[0]) || routes(t, h, a.URLs[0]) {
		t.Fatal("an unrouted queue still listens or routes")
	}
	_, err = h.SetURLs("a", URLChange{Add: []string{"http://127.0.0.1:0/x/"}})
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != coded.QueueClosed {
		t.Fatalf("got %v, want ERR_HTTPSYS_QUEUE_CLOSED", err)
	}
	if len(h.table.Entries()) != 0 {
		t.Fatalf("routes left: %v", h.table.Entries())
	}
}
