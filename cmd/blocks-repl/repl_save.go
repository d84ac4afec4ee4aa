package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/run"
)

// accept records an input that ran without error, with the main-loop
// runs it made.
func (s *session) accept(chunk string, runs []run.LoopRun) {
	if len(runs) > 0 {
		if s.runs == nil {
			s.runs = map[int][]run.LoopRun{}
		}
		s.runs[len(s.accepted)] = runs
	}
	s.accepted = append(s.accepted, chunk)
}

// script is the session's code as :save writes it: the inputs that ran
// without error, in order, then next (the input about to run; "" for
// none).
func (s *session) script(next string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Saved from a blocks-repl session on %s.\n", time.Now().UTC().Format(time.RFC3339))
	b.WriteString("# The inputs that ran without error, in order; run with: blocks-repl run FILE\n\n")
	for i, c := range s.accepted {
		b.WriteString(strings.TrimRight(s.savedInput(i, c), "\n"))
		b.WriteString("\n")
	}
	if next != "" {
		b.WriteString(strings.TrimRight(next, "\n") + "\n")
	}
	return b.String()
}

// recordScript makes the session's code, with next the input about to
// run, the script that the checkpoints it writes store: resume re-runs
// the session's code (SetSessionScript). The script is built only when a
// checkpoint is written, while next runs (the accepted inputs do not
// change then). The script is named
// session.star in the current directory unless the session set
// scriptPath.
func (s *session) recordScript(next string) {
	p := s.scriptPath
	if p == "" {
		p = "session.star"
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	s.interp.SetSessionScript(p, func() []byte { return []byte(s.script(next)) })
}

// savedInput is accepted input i as :save writes it. A training run that
// Ctrl-C paused and a later main_loop.run() continued is one
// uninterrupted run (resumption is bit-exact), so the script runs it at
// once, where it was paused, and the bare main_loop.run() that continued
// it becomes a comment: the script then ends with the session's state.
func (s *session) savedInput(i int, chunk string) string {
	runs := s.runs[i]
	if len(runs) == 0 {
		return chunk
	}
	allContinued := true
	for _, r := range runs {
		if !r.Continued {
			allContinued = false
		}
	}
	if allContinued && isBareRunCall(chunk) {
		var b strings.Builder
		for _, l := range strings.Split(strings.TrimRight(chunk, "\n"), "\n") {
			b.WriteString("# " + l + "\n")
		}
		b.WriteString("# (this main_loop.run() continued the run Ctrl-C paused above, which the script runs uninterrupted)\n")
		return b.String()
	}
	last := runs[len(runs)-1]
	if !last.Paused {
		return chunk
	}
	if s.continuedAfter(i) {
		return fmt.Sprintf("# Ctrl-C paused this run at iteration %d and a later main_loop.run() continued it:\n"+
			"# the script runs it uninterrupted (the same state, bit for bit).\n%s", last.Iteration, chunk)
	}
	return fmt.Sprintf("# Ctrl-C paused this run at iteration %d and the session never continued it:\n"+
		"# the script trains it to the end its extensions set.\n%s", last.Iteration, chunk)
}

// continuedAfter reports whether an input after i continued a paused run.
func (s *session) continuedAfter(i int) bool {
	for j := i + 1; j < len(s.accepted); j++ {
		for _, r := range s.runs[j] {
			if r.Continued {
				return true
			}
		}
	}
	return false
}

// isBareRunCall reports whether chunk is one statement NAME.run().
func isBareRunCall(chunk string) bool {
	f, err := starlib.FileOptions.Parse("<input>", chunk, 0)
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	e, ok := f.Stmts[0].(*syntax.ExprStmt)
	if !ok {
		return false
	}
	c, ok := e.X.(*syntax.CallExpr)
	if !ok || len(c.Args) != 0 {
		return false
	}
	d, ok := c.Fn.(*syntax.DotExpr)
	return ok && d.Name.Name == "run"
}

// umask is the process's file-creation mask.
func umask() uint32 {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return uint32(m)
}
