//go:build !unix

package listen

import "os"

// keepAliveOf: descriptors are handed over on Unix only (internal/nodeipc).
func keepAliveOf(*os.File) (on bool, known bool) { return false, false }
