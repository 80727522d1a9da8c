package conn

// What the router's other protocols (internal/h2) share of this package's answers:
// the same statuses and pages as HTTP/1.1 (an h2 stream's local answer is the same
// page an HTTP/1.1 request gets, as in the JS router), not a copy of them.

// Variant is a page's variant: a status with a title and text of its own.
type Variant = variant

// The page variants: the statuses whose page says more than the status's name
// (HTTP.SYS's "Bad Request - Invalid Hostname", the queue's 503s, ...).
const (
	Plain           = plain
	InvalidHostname = invalidHostname
	InvalidURL      = invalidURL
	QueueFull       = queueFull
	QueueTimeoutV   = queueTimeout
	NoQueue         = noQueue
	AppDownV        = appDown
	Opaque          = opaque
)

// Page is the body of the page the router answers status with (text/html,
// us-ascii).
func Page(status int, v Variant) string {
	_, body := page(status, v)
	return body
}
