// Package coded is the router's errors as the JS side rebuilds them: Code is one of
// src/errors.js (README "Errors"), Details the fields its constructor takes. The
// supervisor (src/supervisor/native-router.js) and a refused worker (HELLO_ERR) throw
// the error of that code built from Details, so the user reads the same message as
// from the JS side's own errors; Message is what the router's own log says.
package coded

// The codes the router gives (src/errors.js).
const (
	BadPrefix          = "ERR_HTTPSYS_BAD_PREFIX"
	URLConflict        = "ERR_HTTPSYS_URL_CONFLICT"
	PortInUse          = "ERR_HTTPSYS_PORT_IN_USE"
	AccessDenied       = "ERR_HTTPSYS_ACCESS_DENIED"
	AddressUnavailable = "ERR_HTTPSYS_ADDRESS_UNAVAILABLE"
	QueueNotFound      = "ERR_HTTPSYS_QUEUE_NOT_FOUND"
	QueueExists        = "ERR_HTTPSYS_QUEUE_EXISTS"
	QueueClosed        = "ERR_HTTPSYS_QUEUE_CLOSED"
	AttachDenied       = "ERR_HTTPSYS_ATTACH_DENIED"
	Protocol           = "ERR_HTTPSYS_PROTOCOL"
	TLSCert            = "ERR_HTTPSYS_TLS_CERT"
	TLSNoCert          = "ERR_HTTPSYS_TLS_NO_CERT"
	// BadArgument is node's code for a bad argument value: a command the router
	// cannot read
	BadArgument = "ERR_INVALID_ARG_VALUE"
	// Failed is a failure the router has no other code for
	Failed = "ERR_HTTPSYS_ROUTER_FAILED"
)

// Error is a coded error.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// New returns a coded error.
func New(code, message string, details map[string]any) *Error {
	return &Error{Code: code, Message: message, Details: details}
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// ErrorCode is the code (attach.CodedError).
func (e *Error) ErrorCode() string { return e.Code }

// ErrorDetails are the constructor's fields (attach.CodedError).
func (e *Error) ErrorDetails() map[string]any {
	if e.Details == nil {
		return map[string]any{}
	}
	return e.Details
}
