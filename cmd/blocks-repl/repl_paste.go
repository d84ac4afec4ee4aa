package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chzyer/readline"
)

// Pasting into the REPL.
//
// chzyer/readline handles its input one key at a time and redraws the
// whole line after each, so a paste of n characters cost O(n²): 83 s for
// one 4,000-character line, 42 s for 1,000 lines. pasteInput sits between
// the terminal and readline and takes a paste out of the key stream:
//
//   - a paste is what the terminal brackets with ESC[200~ … ESC[201~
//     (bracketed paste, which the REPL turns on), or, from a terminal
//     without it, a burst of plain text (no tab, which asks for a
//     completion) that arrives in one read with two lines of text in it
//     or at least pasteBurst bytes (a person typing sends a key or an
//     escape sequence per read; keys typed ahead give the same lines
//     either way);
//   - its text up to the first newline is inserted at the cursor in one
//     edit (readline's Listener hook, woken by a sentinel key that
//     readline's FuncFilterInputRune hook turns into the no-op Ctrl-G);
//   - when it has a newline, an Enter follows, so readline returns that
//     line; the complete lines after it are queued and handed to the REPL
//     by ReadLine without readline (echoed after their prompt, kept in the
//     history), and the text after the last newline starts the next
//     line's edit (ReadlineWithDefault).
//
// Input after a paste waits (pasteInput's Read blocks) until the paste has
// been taken, so keys typed meanwhile keep their order. The result is the
// same sequence of lines as typing the text, at O(n).
type pasteInput struct {
	src io.Reader

	mu     sync.Mutex
	cond   *sync.Cond
	raw    []byte // read from src, not yet looked at
	out    []byte // what readline reads next
	closed bool

	bracketed bool   // inside ESC[200~ … ESC[201~
	pasted    []byte // the bracketed paste so far
	lastCR    bool   // the last newline seen was \r (so a following \n is not another)

	insert []rune   // text for the listener to insert at the cursor; nil when none
	lines  []string // complete lines after the one readline returns
	tail   *string  // text that starts the next line's edit
}

const (
	pasteSentinel = '\uFDD0' // a Unicode noncharacter: never typed
	pasteStart    = "\x1b[200~"
	pasteEnd      = "\x1b[201~"
	pasteBurst    = 32
	// EnableBracketedPaste and DisableBracketedPaste are the terminal's
	// switches (xterm's mode 2004).
	enableBracketedPaste  = "\x1b[?2004h"
	disableBracketedPaste = "\x1b[?2004l"
)

func newPasteInput(src io.Reader) *pasteInput {
	p := &pasteInput{src: src}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// drained reports whether the last paste has been taken. Lock held.
func (p *pasteInput) drained() bool {
	return p.insert == nil && len(p.lines) == 0 && p.tail == nil
}

// Read is readline's input: the terminal's bytes with pastes replaced by
// sentinel keys (and an Enter).
func (p *pasteInput) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if len(p.out) > 0 {
			n := copy(b, p.out)
			p.out = p.out[n:]
			return n, nil
		}
		for !p.drained() && !p.closed {
			p.cond.Wait()
		}
		if p.closed {
			return 0, io.EOF
		}
		if len(p.raw) > 0 && p.scan(false) {
			continue
		}
		// Read more, without the lock (Close may come meanwhile).
		buf := make([]byte, 64<<10)
		p.mu.Unlock()
		n, err := p.src.Read(buf)
		p.mu.Lock()
		if n > 0 {
			fresh := len(p.raw) == 0
			p.raw = append(p.raw, buf[:n]...)
			if p.scan(fresh) {
				continue
			}
		}
		if err != nil {
			if len(p.raw) > 0 { // an incomplete sequence at the end
				p.out, p.raw = appendKeys(p.out, p.raw), nil
				continue
			}
			return 0, err
		}
	}
}

// scan turns the start of raw into output: plain keys, or one paste.
// fresh says raw is exactly one read's bytes (a burst may be a paste). It
// reports whether it produced output or queued a paste. Lock held.
func (p *pasteInput) scan(fresh bool) bool {
	if p.bracketed {
		i := bytes.Index(p.raw, []byte(pasteEnd))
		if i < 0 {
			// Keep the bytes that may begin the end marker.
			keep := min(len(p.raw), len(pasteEnd)-1)
			p.pasted = append(p.pasted, p.raw[:len(p.raw)-keep]...)
			p.raw = p.raw[len(p.raw)-keep:]
			return false
		}
		p.pasted = append(p.pasted, p.raw[:i]...)
		p.raw = p.raw[i+len(pasteEnd):]
		p.bracketed = false
		text := p.pasted
		p.pasted = nil
		p.paste(text)
		return true
	}
	if i := bytes.Index(p.raw, []byte(pasteStart)); i == 0 {
		p.raw = p.raw[len(pasteStart):]
		p.bracketed = true
		return p.scan(false)
	} else if i > 0 {
		// Keys before the paste go first.
		p.out = appendKeys(p.out, p.raw[:i])
		p.raw = p.raw[i:]
		return true
	}
	if fresh && isBurst(p.raw) {
		text := p.raw
		// A multi-byte character cut at the end waits for its rest.
		cut := len(text)
		for cut > 0 && !utf8.FullRune(text[lastRuneStart(text):cut]) {
			cut = lastRuneStart(text)
		}
		p.raw = append([]byte(nil), text[cut:]...)
		p.paste(text[:cut])
		return true
	}
	// Plain keys. An escape at the end may begin a paste marker: keep it.
	keep := 0
	if j := bytes.LastIndexByte(p.raw, 0x1b); j >= 0 && strings.HasPrefix(pasteStart, string(p.raw[j:])) {
		keep = len(p.raw) - j
	}
	p.out = appendKeys(p.out, p.raw[:len(p.raw)-keep])
	p.raw = p.raw[len(p.raw)-keep:]
	p.lastCR = false
	return len(p.out) > 0
}

// appendKeys appends typed keys to out, a NUL as Ctrl-D. A NUL is what
// the terminal's line discipline hands over, in raw mode, for a Ctrl-D
// typed in its cooked mode (while a statement ran) and read only once the
// REPL is back at its prompt. readline ends the input on a NUL as on
// Ctrl-D, but only Ctrl-D, Ctrl-C and Enter stop its reader: after a NUL
// it reads the terminal on, and its Close waits for that read, which no
// later Ctrl-D ends (a read begun in raw mode waits for a byte, and the
// cooked mode's end of file is none): the session never ended. As Ctrl-D
// the key also means the same at a non-empty line (delete the character
// under the cursor) as typed at the prompt, where a NUL sent the line.
func appendKeys(out, keys []byte) []byte {
	for _, c := range keys {
		if c == 0 {
			c = readline.CharDelete
		}
		out = append(out, c)
	}
	return out
}

func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return max(i, 0)
}

// isBurst reports whether one read's bytes look like pasted text: only
// printable characters and newlines, and either at least pasteBurst
// bytes or at least two lines with text. Keys typed ahead that arrive
// together (a line and its Enter, two Enters) are not a paste: they must
// reach readline as keys, which may be in a mode of its own (Ctrl-R's
// search, where the paste's sentinel key would cancel the search).
func isBurst(b []byte) bool {
	lines, text := 0, false
	for _, c := range b {
		switch {
		case c == '\r' || c == '\n':
			if text {
				lines++
			}
			text = false
		case c < 0x20 || c == 0x7f:
			// Tab too: typed ahead, it asks for a completion.
			return false
		default:
			text = true
		}
	}
	return len(b) >= pasteBurst || lines >= 2
}

// paste queues pasted text: its first line for the listener to insert
// (and an Enter when a newline follows), the other complete lines for
// ReadLine, and the rest for the next line's edit. Lock held.
func (p *pasteInput) paste(text []byte) {
	var lines []string
	i := 0
	if p.lastCR && len(text) > 0 && text[0] == '\n' {
		i = 1 // the \n of a \r\n split across two reads
	}
	start := i
	for ; i < len(text); i++ {
		c := text[i]
		if c != '\r' && c != '\n' {
			continue
		}
		lines = append(lines, string(text[start:i]))
		if c == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		start = i + 1
	}
	p.lastCR = len(text) > 0 && text[len(text)-1] == '\r'
	rest := string(text[start:])
	if len(lines) == 0 {
		if rest != "" {
			p.insert = []rune(rest)
			p.out = append(p.out, string([]rune{pasteSentinel, pasteSentinel})...)
		}
		return
	}
	p.insert = []rune(lines[0])
	p.lines = append(p.lines, lines[1:]...)
	if rest != "" {
		p.tail = &rest
	}
	// Twice: a completion menu, if one is open, takes the first key.
	p.out = append(p.out, string([]rune{pasteSentinel, pasteSentinel, readline.CharEnter})...)
}

// filter is readline's FuncFilterInputRune: a sentinel becomes Ctrl-G
// (which only leaves search and completion modes), and the listener then
// inserts the paste. (A dropped key would make readline read on after
// the next Enter, while the terminal is back in its cooked mode.)
func (p *pasteInput) filter(r rune) (rune, bool) {
	if r == pasteSentinel {
		return readline.CharBell, true
	}
	return r, true
}

// OnChange is readline's Listener: after the Ctrl-G that stands for a
// paste, it inserts the paste's text at the cursor in one edit.
func (p *pasteInput) OnChange(line []rune, pos int, key rune) ([]rune, int, bool) {
	if key != readline.CharBell {
		return nil, 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.insert == nil {
		return nil, 0, false
	}
	pos = min(max(pos, 0), len(line))
	out := make([]rune, 0, len(line)+len(p.insert))
	out = append(out, line[:pos]...)
	out = append(out, p.insert...)
	out = append(out, line[pos:]...)
	pos += len(p.insert)
	p.insert = nil
	p.cond.Broadcast()
	return out, pos, true
}

// next takes the paste's next queued line (ok) or the text that starts
// the next line's edit (tail, with ok false).
func (p *pasteInput) next() (line string, ok bool, tail *string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.cond.Broadcast()
	if len(p.lines) > 0 {
		line = p.lines[0]
		p.lines = p.lines[1:]
		return line, true, nil
	}
	tail, p.tail = p.tail, nil
	return "", false, tail
}

// Close ends Read and closes the terminal's input.
func (p *pasteInput) Close() error {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	if c, ok := p.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
