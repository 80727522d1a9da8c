// Package jsonlines is the loop of the router's test drivers (cmd/fuzz-driver,
// cmd/route-driver): one JSON job a line on stdin, one JSON answer a line on stdout,
// so that a jest test or the fuzzer puts many inputs through one process.
package jsonlines

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Serve decodes each line of in that is not blank into a new J and writes what answer
// makes of it as one line of out (HTML characters as they are: the JS side reads it
// with JSON.parse). It returns nil at the end of in, else the first error: a line that
// is no J, an answer's, or a write's.
func Serve[J any](in io.Reader, out io.Writer, answer func(*J) (any, error)) error {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriterSize(out, 1<<20)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		line, err := r.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			var j J
			if err := json.Unmarshal([]byte(line), &j); err != nil {
				return fmt.Errorf("bad input line: %w", err)
			}
			res, err := answer(&j)
			if err != nil {
				return err
			}
			if err := enc.Encode(res); err != nil {
				return err
			}
		}
		if err != nil {
			return nil // end of input
		}
	}
}
