package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

const replHelp = `Type Starlark statements or expressions; an expression's value is printed
(and kept in _). A line ending in ':' starts a block, ended by a blank line.
load() takes the modules below and .star files relative to the current
directory.

  :help           this help and the list of modules
  :help MODULE    the names MODULE defines
  :quit           leave (also end of input, Ctrl-D)
`

// repl is the plain line-oriented interactive session: read a line (or a
// block), run it, print its value or its error, repeat until end of input.
// Errors never end the session. Prompts are shown only on a terminal.
func repl(in io.Reader, out, errw io.Writer, interactive bool) int {
	interp, err := starlib.NewInterp(starlib.Options{Stdout: out})
	if err != nil {
		fmt.Fprintf(errw, "blocks-repl: %v\n", err)
		return 1
	}
	if interactive {
		fmt.Fprintf(out, "%s — Starlark for Blocks and Fuel. :help for help, Ctrl-D to quit.\n", versionString())
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	prompt := func(p string) {
		if interactive {
			fmt.Fprint(out, p)
		}
	}
	for {
		prompt(">>> ")
		if !sc.Scan() {
			break
		}
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case strings.HasPrefix(trimmed, ":"):
			if quit := replCommand(trimmed, out, errw); quit {
				return 0
			}
			continue
		}
		chunk := line + "\n"
		if strings.HasSuffix(strings.TrimRight(line, " \t"), ":") {
			for {
				prompt("... ")
				if !sc.Scan() {
					break
				}
				l := sc.Text()
				if strings.TrimSpace(l) == "" {
					break
				}
				chunk += l + "\n"
			}
		}
		execChunk(interp, chunk, out, errw)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(errw, "blocks-repl: reading input: %v\n", err)
		return 1
	}
	if interactive {
		fmt.Fprintln(out)
	}
	return 0
}

// execChunk runs one chunk; Ctrl-C cancels it, a Go panic is reported as
// an internal error and the session goes on.
func execChunk(interp *starlib.Interp, chunk string, out, errw io.Writer) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(errw, "internal error: %v (a bug in blocks-repl; please report it)\n", r)
		}
	}()
	v, err := interp.ExecREPL(ctx, chunk)
	if err != nil {
		fmt.Fprintln(errw, starlib.Backtrace(err))
		return
	}
	if v != starlark.None {
		fmt.Fprintln(out, v)
	}
}

// command runs a :command and reports whether the session should end.
func replCommand(line string, out, errw io.Writer) bool {
	fields := strings.Fields(line)
	switch fields[0] {
	case ":quit", ":q", ":exit":
		return true
	case ":help", ":h":
		if len(fields) == 1 {
			fmt.Fprint(out, replHelp)
			fmt.Fprintf(out, "\nmodules: %s\n", strings.Join(starlib.Modules(), ", "))
			return false
		}
		m, ok := starlib.Lookup(fields[1])
		if !ok {
			fmt.Fprintf(errw, "no module %q\n", fields[1])
			return false
		}
		names := m.AttrNames()
		sort.Strings(names)
		fmt.Fprintf(out, "module %s: %s\n", fields[1], strings.Join(names, ", "))
		return false
	}
	fmt.Fprintf(errw, "unknown command %s (:help for help)\n", fields[0])
	return false
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
