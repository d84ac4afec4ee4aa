package starlib_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

// FuzzParseOverride: any --set text parses without a panic, to a literal
// value or to the text itself as a string; a value that is not a string
// prints back to text that parses to an equal value.
func FuzzParseOverride(f *testing.F) {
	for _, s := range []string{"0.05", "200", "True", `"adam"`, "[200, 100]", "(1, 2)", `{"a": 1}`, "-3", "1e-3",
		"None", "adam", "[1, [2, (3,)]]", "x + 1", "f(2)", "[", `"unterminated`, "0x1f", "1_000", "--1", "+-2", "1e400", "0E", "1.5e", "[1e400]", "1<<70"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := starlib.ParseOverride(text)
		if err != nil {
			// The two refusals: a number a float cannot hold, and a shift.
			if strings.Contains(err.Error(), "is an expression, not a literal") {
				return
			}
			if !strings.Contains(err.Error(), "is out of range for a number") || !holdsOverflowingNumber(text) {
				t.Fatalf("ParseOverride(%q): %v", text, err)
			}
			return
		}
		if s, ok := v.(starlark.String); ok {
			if string(s) != text {
				// A string literal: its value, unquoted.
				if _, err := starlib.ParseOverride(string(s)); err != nil {
					t.Fatalf("re-parsing %q: %v", s, err)
				}
			}
			return
		}
		again, err := starlib.ParseOverride(v.String())
		if err != nil {
			t.Fatalf("ParseOverride(%q) = %s, which does not parse again: %v", text, v, err)
		}
		if eq, err := starlark.Equal(v, again); err != nil || !eq {
			if f, ok := v.(starlark.Float); ok && f != f {
				return // NaN is not equal to itself
			}
			t.Errorf("ParseOverride(%q) = %s, printed and parsed again %s", text, v, again)
		}
	})
}

// holdsOverflowingNumber reports whether some substring of text is a
// number strconv finds out of range (1e400), by trying every substring
// that starts with a digit or a point (texts up to 2000 bytes).
func holdsOverflowingNumber(text string) bool {
	if len(text) > 2000 {
		return true
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; (c < '0' || c > '9') && c != '.' {
			continue
		}
		for j := i + 1; j <= len(text); j++ {
			if _, err := strconv.ParseFloat(text[i:j], 64); errors.Is(err, strconv.ErrRange) {
				return true
			}
		}
	}
	return false
}
