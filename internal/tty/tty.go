// Package tty answers the project's one question about terminals: is this
// reader or writer one (a live progress bar, the REPL's line editor, the
// dashboard kept open until Ctrl-C)?
package tty

import (
	"os"

	"golang.org/x/term"
)

// Is reports whether v, a reader or writer, is a terminal: an *os.File
// whose descriptor is one. Anything else (a pipe, a buffer, nil) is not.
func Is(v any) bool {
	f, ok := v.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}
