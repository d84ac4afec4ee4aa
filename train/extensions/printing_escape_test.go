package extensions

import (
	"bytes"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/train/mainloop"
)

// Printing writes log keys and values with their control characters
// escaped: a log row is untrusted text (a resumed checkpoint's script
// writes it) and Printing's writer may be a terminal.
func TestPrintingEscapesControlCharacters(t *testing.T) {
	var out bytes.Buffer
	note := &recordAfterBatch{name: "note\x1b[31m", value: func(*mainloop.MainLoop) any {
		return "ok\x1b[2K\x1b[1Gspoofed\x1b]0;title\x07\u202e"
	}}
	m := mainloop.New(nopAlgorithm{}, rangeStream(1, 0), nil, nil, []mainloop.Extension{
		note,
		must(NewFinishAfter(Triggers{"after_n_epochs": 1})),
		must(NewPrinting(&out, Triggers{"before_first_epoch": false, "after_epoch": false})),
	})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.ContainsAny(s, "\x1b\x07\u202e") {
		t.Errorf("control characters written raw:\n%q", s)
	}
	if want := `note\x1b[31m: ok\x1b[2K\x1b[1Gspoofed\x1b]0;title\x07\u{202e}`; !strings.Contains(s, want) {
		t.Errorf("output lacks %s:\n%s", want, s)
	}
}
