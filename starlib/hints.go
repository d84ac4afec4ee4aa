package starlib

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Hints for the errors a Python habit causes: the parser's and the
// resolver's messages are exact but assume one knows Starlark.

// Hint adds a hint to a syntax or resolve error of src; other errors come
// back unchanged. globals are names the script could have meant (the REPL
// session's), for "undefined" errors, and lib's modules say which load
// brings a name (lib may be nil).
func Hint(err error, src []byte, globals starlark.StringDict, lib *Library) error {
	var se syntax.Error
	if errors.As(err, &se) {
		if h := syntaxHint(se, src); h != "" {
			se.Msg += " (" + h + ")"
			return se
		}
		return err
	}
	var el resolve.ErrorList
	if errors.As(err, &el) {
		changed := false
		out := make(resolve.ErrorList, len(el))
		for i, e := range el {
			out[i] = e
			if h := undefinedHint(e.Msg, globals, lib); h != "" {
				out[i].Msg += " (" + h + ")"
				changed = true
			}
		}
		if changed {
			return out
		}
	}
	return err
}

func syntaxHint(e syntax.Error, src []byte) string {
	msg := e.Msg
	line := strings.TrimSpace(lineOf(src, e.Pos.Line))
	if msg == "invalid syntax" { // the REPL's parser says less
		switch {
		case strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "from "):
			msg = "got import,"
		case strings.Contains(line, "**"):
			msg = "got '**',"
		}
	}
	switch {
	case strings.HasPrefix(msg, "got import,") || strings.HasPrefix(msg, "got from,"):
		return `Starlark has no import: theano and numpy are predeclared (import numpy as np: np = numpy; from theano import tensor as T: T = theano.tensor), and load("numpy", "zeros", "ones") binds names from a module; :help lists the modules`
	case strings.HasPrefix(msg, "got '**',"):
		return `Starlark has no **: write x * x, pow(x, y) for numbers (load("math", "pow")), or pow(x, y) and sqr(x) from load("tensor", ...) for variables`
	case strings.HasPrefix(msg, "got ',', want primary expression") && strings.Contains(lineOf(src, e.Pos.Line), "[:"):
		return `Starlark slices take one axis: write x[":", 0] for x[:, 0] (or x[slice(None), 0])`
	}
	if strings.Contains(msg, "want ')'") || strings.Contains(msg, "want ']'") || strings.Contains(msg, "want '}'") {
		if line, col, ok := unclosedBracket(src, e.Pos); ok && line < int(e.Pos.Line) {
			return fmt.Sprintf("the %q opened at line %d, column %d is not closed", lineOf(src, int32(line))[col-1:col], line, col)
		}
	}
	return ""
}

// lineOf is line n (1-based) of src.
func lineOf(src []byte, n int32) string {
	lines := strings.Split(string(src), "\n")
	if n < 1 || int(n) > len(lines) {
		return ""
	}
	return lines[n-1]
}

// unclosedBracket finds the innermost bracket still open before pos's line,
// skipping strings and comments (a plain scan: enough for a hint).
func unclosedBracket(src []byte, pos syntax.Position) (line, col int, ok bool) {
	type open struct{ line, col int }
	var stack []open
	l, c := 1, 0
	var quote byte
	triple := false
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if ch == '\n' {
			l, c = l+1, 0
		} else {
			c++
		}
		if l >= int(pos.Line) { // the hint is for brackets opened on earlier lines
			break
		}
		switch {
		case quote != 0:
			if ch == '\\' {
				i++
				c++
			} else if ch == quote && (!triple || (i+2 < len(src) && src[i+1] == quote && src[i+2] == quote)) {
				if triple {
					i += 2
					c += 2
				}
				quote = 0
			}
		case ch == '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case ch == '"' || ch == '\'':
			quote = ch
			triple = i+2 < len(src) && src[i+1] == ch && src[i+2] == ch
			if triple {
				i += 2
				c += 2
			}
		case ch == '(' || ch == '[' || ch == '{':
			stack = append(stack, open{l, c})
		case ch == ')' || ch == ']' || ch == '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) == 0 {
		return 0, 0, false
	}
	o := stack[len(stack)-1]
	return o.line, o.col, true
}

// undefinedHint suggests, for "undefined: NAME", a near global or
// universal name, or the module that exports a near name.
func undefinedHint(msg string, globals starlark.StringDict, lib *Library) string {
	name, ok := strings.CutPrefix(msg, "undefined: ")
	if !ok || strings.Contains(name, " ") {
		return ""
	}
	// Python's import aliases.
	switch name {
	case "np":
		return "numpy is predeclared: np = numpy is Python's import numpy as np"
	case "T", "TT":
		return name + " = theano.tensor is Python's import theano.tensor as " + name
	}
	// The name itself may be among them (predeclared where the error was
	// not): it is no suggestion.
	var names []string
	add := func(n string) {
		if n != name {
			names = append(names, n)
		}
	}
	for n := range globals {
		if !HiddenGlobal(n) {
			add(n)
		}
	}
	for n := range starlark.Universe {
		add(n)
	}
	for n := range Predeclared() {
		add(n)
	}
	sort.Strings(names)
	if c := closest(name, names); c != "" {
		return "did you mean " + c + "?"
	}
	// A name a module exports: say which load brings it.
	best, bestMod, bestD := "", "", len(name)/2+1
	for _, m := range lib.Names() {
		mod, ok := lib.Lookup(m)
		if !ok {
			continue
		}
		for n, v := range mod.Members {
			if _, isModule := v.(*starlarkstruct.Module); isModule {
				continue
			}
			if d := editDistance(name, n); d < bestD || (d == bestD && best != "" && (n < best || n == best && m < bestMod)) {
				best, bestMod, bestD = n, m, d
			}
		}
	}
	if best == name {
		return fmt.Sprintf("it comes from a module: load(%q, %q)", bestMod, best)
	}
	if best != "" {
		return fmt.Sprintf("did you mean %s? load(%q, %q)", best, bestMod, best)
	}
	return ""
}
