package main

import (
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

// completer completes, at the cursor: module names inside load("..."), the
// names a module exports in load's later strings, attributes after a
// dotted name (bricks, variables, streams, the log, arrays, modules), and
// otherwise globals, builtins and keywords. It never calls anything: a
// dotted name is resolved through attributes only.
type completer struct{ s *session }

var keywords = []string{"and", "break", "continue", "def", "elif", "else", "for", "if", "in", "lambda", "load", "not", "or", "pass", "return", "while", "True", "False", "None"}

var replCommands = []string{":help", ":info", ":load", ":quit", ":reset", ":save", ":shape", ":type"}

// Do returns the candidates' remaining text after the word being completed
// and that word's length (readline's AutoCompleter).
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	text := string(line[:pos])
	prefix, candidates := c.candidates(text)
	var out [][]rune
	for _, cand := range candidates {
		if strings.HasPrefix(cand, prefix) && cand != prefix {
			out = append(out, []rune(cand[len(prefix):]))
		}
	}
	return out, len([]rune(prefix))
}

// candidates returns the word being completed and the possible words.
func (c *completer) candidates(text string) (string, []string) {
	if strings.HasPrefix(text, ":") && !strings.Contains(text, " ") {
		return text, replCommands
	}
	if prefix, names, ok := loadCompletion(text, c.s.interp.Library()); ok {
		return prefix, names
	}
	// The identifier (or dotted name) that ends at the cursor.
	i := len(text)
	for i > 0 && (isIdentByte(text[i-1]) || text[i-1] == '.') {
		i--
	}
	word := text[i:]
	if dot := strings.LastIndexByte(word, '.'); dot >= 0 {
		return word[dot+1:], c.attributes(word[:dot])
	}
	return word, c.globals()
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// loadCompletion handles a cursor inside a string of a load(...) call: the
// first string names a module of lib, the later ones its members.
func loadCompletion(text string, lib *starlib.Library) (prefix string, names []string, ok bool) {
	i := strings.LastIndex(text, "load(")
	if i < 0 || (i > 0 && isIdentByte(text[i-1])) {
		return "", nil, false
	}
	args := text[i+len("load("):]
	if strings.Contains(args, ")") {
		return "", nil, false
	}
	// Split into string literals; the cursor must be inside an open one.
	var strs []string
	var cur strings.Builder
	var quote byte
	for j := 0; j < len(args); j++ {
		ch := args[j]
		switch {
		case quote == 0 && (ch == '"' || ch == '\''):
			quote = ch
			cur.Reset()
		case quote != 0 && ch == quote:
			strs = append(strs, cur.String())
			quote = 0
		case quote != 0:
			cur.WriteByte(ch)
		}
	}
	if quote == 0 {
		return "", nil, false
	}
	if len(strs) == 0 {
		return cur.String(), lib.Names(), true
	}
	m, found := lib.Lookup(strs[0])
	if !found {
		return cur.String(), nil, true
	}
	return cur.String(), m.AttrNames(), true
}

// globals are the session's globals, the builtins and the keywords.
func (c *completer) globals() []string {
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for n := range c.s.interp.Globals {
		if !starlib.HiddenGlobal(n) {
			add(n)
		}
	}
	for n := range starlark.Universe {
		add(n)
	}
	for _, k := range keywords {
		add(k)
	}
	sort.Strings(names)
	return names
}

// attributes resolves a dotted name (globals, then attributes) and lists
// its attributes.
func (c *completer) attributes(path string) []string {
	parts := strings.Split(path, ".")
	v, ok := c.s.interp.Globals[parts[0]]
	if !ok {
		v, ok = starlark.Universe[parts[0]]
	}
	if !ok {
		return nil
	}
	for _, p := range parts[1:] {
		h, ok := v.(starlark.HasAttrs)
		if !ok {
			return nil
		}
		next, err := h.Attr(p)
		if err != nil || next == nil {
			return nil
		}
		v = next
	}
	h, ok := v.(starlark.HasAttrs)
	if !ok {
		return nil
	}
	names := h.AttrNames()
	sort.Strings(names)
	return names
}
