package termsafe

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented":       "plain text\n\tindented",
		"# hi\x1b[2K\x1b[1Gevil()":     `# hi\x1b[2K\x1b[1Gevil()`,
		"\x1b]0;title\x07":             `\x1b]0;title\x07`,
		"\x1b]52;c;aGk=\x07":           `\x1b]52;c;aGk=\x07`,
		"good\rbad":                    `good\x0dbad`,
		"a\u202eb":                     `a\u{202e}b`,
		"caf\u00e9 \u00e0 \u4e2d":      "caf\u00e9 \u00e0 \u4e2d",
		"\u009b2J":                     `\x9b2J`,
		string([]byte{'a', 0xff, 'b'}): `a\xffb`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
