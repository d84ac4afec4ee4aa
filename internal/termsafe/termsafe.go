// Package termsafe makes untrusted text safe to show in a terminal: a
// checkpoint's stored script, its manifest and log, what a script prints
// and the errors it raises. Control characters (ANSI escape sequences
// that erase or hide lines, OSC sequences that set the window title or
// the clipboard, carriage returns that overprint) and Unicode's
// bidirectional overrides (which reorder what is shown, "Trojan source")
// are written as visible escapes instead of being sent to the terminal.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal raw. Newlines and
// tabs are kept.
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls (CSI, OSC as one code point)
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true // bidirectional overrides, isolates and marks
	}
	return false
}

// Escape returns s with every unsafe character written as \xHH (below
// U+0100) or \u{HHHH}, and invalid UTF-8 bytes as \xHH. Text without
// such characters is returned unchanged.
func Escape(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafe(r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u{%04x}`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
