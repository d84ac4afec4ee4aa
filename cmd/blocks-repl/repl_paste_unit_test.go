package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// pasteInput's splitting of pasted text into the first line's insert, the
// queued lines and the tail, across reads.
func TestPasteInputSplits(t *testing.T) {
	read := func(p *pasteInput) string {
		b := make([]byte, 1<<16)
		n, err := p.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:n])
	}
	take := func(p *pasteInput) (insert string, lines []string, tail string) {
		if nl, _, ok := p.OnChange([]rune("ab"), 1, '\a'); ok {
			insert = string(nl)
		}
		for {
			l, ok, tl := p.next()
			if !ok {
				if tl != nil {
					tail = *tl
				}
				return insert, lines, tail
			}
			lines = append(lines, l)
		}
	}
	sentinels := string([]rune{pasteSentinel, pasteSentinel})

	// Bracketed, with \r\n newlines, a Tab kept as text, a tail.
	p := newPasteInput(strings.NewReader("x" + pasteStart + "one\r\ntwo\tt\rthree\nfo" + pasteEnd + "\x1b[D"))
	if got := read(p); got != "x" {
		t.Errorf("keys before the paste: %q", got)
	}
	if got := read(p); got != sentinels+"\r" {
		t.Errorf("paste stands for %q", got)
	}
	ins, lines, tail := take(p)
	if ins != "aoneb" || !slices.Equal(lines, []string{"two\tt", "three"}) || tail != "fo" {
		t.Errorf("insert %q lines %q tail %q", ins, lines, tail)
	}
	if got := read(p); got != "\x1b[D" {
		t.Errorf("keys after the paste: %q", got)
	}

	// A burst without brackets, whose \r\n is cut between two reads.
	p = newPasteInput(io.MultiReader(strings.NewReader("first line\rnext\r"), strings.NewReader("\nsecond\rthird\r")))
	if got := read(p); got != sentinels+"\r" {
		t.Errorf("burst stands for %q", got)
	}
	if ins, lines, tail := take(p); ins != "afirst lineb" || !slices.Equal(lines, []string{"next"}) || tail != "" {
		t.Errorf("insert %q lines %q tail %q", ins, lines, tail)
	}
	read(p)
	if ins, lines, tail := take(p); ins != "asecondb" || !slices.Equal(lines, []string{"third"}) || tail != "" {
		t.Errorf("after the cut \\r\\n: insert %q lines %q tail %q", ins, lines, tail)
	}

	// Typed keys are not a paste: one key, an escape sequence, a Tab, a
	// line and its Enter typed ahead, two Enters (which, in Ctrl-R's
	// search, must reach readline as keys).
	for _, keys := range []string{"a", "\x1b[A", "ab\tc\r", "\x7f", "x = 1\r", "\r\r", "marker + 1\r\r"} {
		p = newPasteInput(strings.NewReader(keys))
		if got := read(p); got != keys {
			t.Errorf("keys %q came out as %q", keys, got)
		}
	}

	// A NUL (a Ctrl-D typed in the terminal's cooked mode, read in raw
	// mode) is Ctrl-D, alone and after keys.
	for keys, want := range map[string]string{"\x00": "\x04", "ab\x00": "ab\x04"} {
		p = newPasteInput(strings.NewReader(keys))
		if got := read(p); got != want {
			t.Errorf("keys %q came out as %q, want %q", keys, got, want)
		}
	}
}
