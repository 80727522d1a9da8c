package parse

import "strconv"

// Code is the stable code of a parse error (src/errors.js ERR_HTTPSYS_HTTP_PARSE,
// README "Errors").
const Code = "ERR_HTTPSYS_HTTP_PARSE"

// Error is bad input: Status is what the router answers (400, 413, 431 or 505) before
// it closes the connection, Reason says what was wrong, in the JS parser's words
// (the same request gets the same reason from either).
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string {
	return Code + ": " + strconv.Itoa(e.Status) + " " + e.Reason
}
