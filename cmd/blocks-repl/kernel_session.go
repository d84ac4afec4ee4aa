package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"sort"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/starlib"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	"github.com/blocks-go/blocks/train/mainloop"
)

// The session's answers to the Jupyter kernel's requests (kernel.go),
// built from the REPL's own code: its completion, its :help, its parser.

// cell runs a notebook cell in the session: its statements in order,
// and, when the last one is an expression on a line of its own, that
// expression's value is returned (as a notebook shows a cell's last
// value). Errors name the cell's lines.
func (s *session) cell(code string) (starlark.Value, error) {
	f, err := starlib.FileOptions.Parse("<cell>", code, 0)
	if err == nil && len(f.Stmts) > 1 {
		last := f.Stmts[len(f.Stmts)-1]
		if _, isExpr := last.(*syntax.ExprStmt); isExpr {
			start, _ := last.Span()
			if start.Col == 1 && int(start.Line) > 1 {
				lines := strings.SplitAfter(code, "\n")
				if int(start.Line)-1 <= len(lines) {
					head := strings.Join(lines[:start.Line-1], "")
					// The expression keeps its line number: the lines
					// before it are blank in its chunk.
					tail := strings.Repeat("\n", int(start.Line)-1) + strings.Join(lines[start.Line-1:], "")
					if _, err := s.eval("<cell>", head); err != nil {
						return nil, err
					}
					return s.eval("<cell>", tail)
				}
			}
		}
	}
	return s.eval("<cell>", code)
}

// errorName splits the last line of a backtrace ("Error: msg",
// "Error in f: msg") into the error's name and message; other errors
// (a syntax error: "<cell>:2:5: got ..., want ...") are named Error and
// keep their line as the message.
func errorName(last string) (string, string) {
	name, msg, ok := strings.Cut(last, ": ")
	if !ok || !strings.HasPrefix(name, "Error") || len(name) > 80 {
		return "Error", last
	}
	return name, msg
}

// kernelInfo is the kernel_info_reply's content.
func kernelInfo() map[string]any {
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       jupyterProtocol,
		"implementation":         "blocks-repl",
		"implementation_version": version,
		"language_info": map[string]any{
			"name":               "starlark",
			"version":            "go.starlark.net",
			"mimetype":           "text/x-python",
			"file_extension":     ".star",
			"pygments_lexer":     "python",
			"codemirror_mode":    "python",
			"nbconvert_exporter": "script",
		},
		"banner":     strings.SplitN(versionString(), "\n", 2)[0] + " — Starlark for Blocks and Fuel. :help for help.",
		"help_links": []any{map[string]any{"text": "Blocks (Starlark) reference", "url": "https://github.com/blocks-go/blocks/blob/main/docs/reference.md"}},
	}
}

// cursorOffset converts Jupyter's cursor_pos (in Unicode code points,
// protocol 5.2 and later) to a byte offset in code.
func cursorOffset(code string, pos int) int {
	if pos < 0 {
		return 0
	}
	off := 0
	for i := 0; i < pos && off < len(code); i++ {
		_, n := utf8.DecodeRuneInString(code[off:])
		off += n
	}
	return off
}

type cursorRequest struct {
	Code      string `json:"code"`
	CursorPos int    `json:"cursor_pos"`
}

// completeReply is the REPL's Tab completion at the cursor.
func (s *session) completeReply(content json.RawMessage) map[string]any {
	var r cursorRequest
	if err := json.Unmarshal(content, &r); err != nil {
		return map[string]any{"status": "error", "ename": "BadRequest", "evalue": err.Error(), "traceback": []string{}}
	}
	off := cursorOffset(r.Code, r.CursorPos)
	text := r.Code[:off]
	// The completer works on the line the cursor is on.
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	prefix, cands := (&completer{s: s}).candidates(text)
	matches := []string{}
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) {
			matches = append(matches, c)
		}
	}
	pos := utf8.RuneCountInString(r.Code[:off])
	return map[string]any{
		"status":       "ok",
		"matches":      matches,
		"cursor_start": pos - utf8.RuneCountInString(prefix),
		"cursor_end":   pos,
		"metadata":     map[string]any{},
	}
}

// inspectReply is :help for the name at the cursor (or the function
// whose call the cursor is in): Shift-Tab shows Blocks' signature.
func (s *session) inspectReply(content json.RawMessage) map[string]any {
	var r cursorRequest
	if err := json.Unmarshal(content, &r); err != nil {
		return map[string]any{"status": "error", "ename": "BadRequest", "evalue": err.Error(), "traceback": []string{}}
	}
	name := nameAt(r.Code, cursorOffset(r.Code, r.CursorPos))
	notFound := map[string]any{"status": "ok", "found": false, "data": map[string]any{}, "metadata": map[string]any{}}
	if name == "" {
		return notFound
	}
	text := s.helpText(name)
	if text == "" && strings.Contains(name, ".") {
		text = s.helpText(name[strings.LastIndexByte(name, '.')+1:])
	}
	if text == "" {
		return notFound
	}
	return map[string]any{"status": "ok", "found": true, "data": map[string]any{"text/plain": text}, "metadata": map[string]any{}}
}

// helpText is what :help NAME prints, "" when it knows nothing of NAME.
func (s *session) helpText(name string) string {
	var out, errb bytes.Buffer
	saved, savedErr := s.out, s.errw
	s.out, s.errw = &out, &errb
	defer func() { s.out, s.errw = saved, savedErr }()
	s.help(name)
	return strings.TrimRight(out.String(), "\n")
}

// nameAt is the (dotted) name at byte offset off of code, or, when the
// cursor is not on a name, the name of the call the cursor is in
// ("MLP(" with the cursor after the bracket).
func nameAt(code string, off int) string {
	ident := func(b byte) bool { return isIdentByte(b) || b == '.' }
	start, end := off, off
	for start > 0 && ident(code[start-1]) {
		start--
	}
	for end < len(code) && isIdentByte(code[end]) {
		end++
	}
	if start < end {
		return strings.Trim(code[start:end], ".")
	}
	// Inside a call: the name before the innermost open bracket.
	depth := 0
	for i := off - 1; i >= 0; i-- {
		switch code[i] {
		case ')':
			depth++
		case '(':
			if depth > 0 {
				depth--
				continue
			}
			j := i
			for j > 0 && ident(code[j-1]) {
				j--
			}
			return strings.Trim(code[j:i], ".")
		}
	}
	return ""
}

// isCompleteReply says whether code is a complete input, as the REPL's
// prompt decides when to run what was typed: def, for, if and while
// continue until a blank line, open brackets until they close.
func (s *session) isCompleteReply(content json.RawMessage) map[string]any {
	var r struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(content, &r); err != nil {
		return map[string]any{"status": "invalid"}
	}
	status := inputStatus(r.Code)
	reply := map[string]any{"status": status}
	if status == "incomplete" {
		indent := ""
		lines := strings.Split(strings.TrimRight(r.Code, "\n"), "\n")
		last := lines[len(lines)-1]
		indent = last[:len(last)-len(strings.TrimLeft(last, " \t"))]
		if strings.HasSuffix(strings.TrimSpace(last), ":") {
			indent += "    "
		}
		reply["indent"] = indent
	}
	return reply
}

// errNeedMore stops the parser when it asks for a line past the input.
var errNeedMore = errors.New("more input needed")

// inputStatus is "complete", "incomplete" or "invalid".
func inputStatus(code string) string {
	lines := strings.SplitAfter(code, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	i := 0
	for i < len(lines) {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		needMore := false
		next := func() ([]byte, error) {
			if i >= len(lines) {
				needMore = true
				return nil, errNeedMore
			}
			l := lines[i]
			i++
			if !strings.HasSuffix(l, "\n") {
				l += "\n"
			}
			return []byte(l), nil
		}
		opts := *starlib.FileOptions
		_, err := opts.ParseCompoundStmt("<cell>", next)
		if needMore {
			return "incomplete"
		}
		if err != nil {
			return "invalid"
		}
	}
	return "complete"
}

// valueBundle is the MIME bundle of an expression's value: the REPL's
// description as text/plain, and a brick's tree and a main loop's or a
// log's summary as text/html too.
func valueBundle(v starlark.Value) map[string]any {
	text := starlib.Describe(v)
	b := map[string]any{"text/plain": text}
	switch v := v.(type) {
	case *starblocks.Brick:
		b["text/html"] = brickHTML(text)
	case *starblocks.MainLoop:
		b["text/html"] = logHTML(v.M.Log, "MainLoop")
	case *starblocks.Log:
		b["text/html"] = logHTML(v.L, "TrainingLog")
	}
	return b
}

// logSummaryBundle is a finished main loop's summary: the log's status
// and last row, as a table.
func logSummaryBundle(l *mainloop.TrainingLog) map[string]any {
	return map[string]any{
		"text/plain": (&starblocks.Log{L: l}).Describe(),
		"text/html":  logHTML(l, "Training finished"),
	}
}

// brickHTML is a brick's tree (its REPL text) for a notebook: the tree
// with the brick names in bold and the parameters' shapes in their own
// colour.
func brickHTML(tree string) string {
	var b strings.Builder
	b.WriteString(`<pre class="blocks-brick" style="line-height:1.25">`)
	for i, line := range strings.Split(tree, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		// "prefix Class name (state)" or "prefix W float32 (784, 100) [WEIGHT]"
		j := strings.IndexFunc(line, func(r rune) bool {
			return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '_'
		})
		if j < 0 {
			b.WriteString(html.EscapeString(line))
			continue
		}
		b.WriteString(html.EscapeString(line[:j]))
		rest := line[j:]
		if k := strings.Index(rest, " ["); k >= 0 && strings.HasSuffix(rest, "]") {
			fmt.Fprintf(&b, `%s <span style="color:#2a7ab0">%s</span>`, html.EscapeString(rest[:k]), html.EscapeString(rest[k+1:]))
		} else {
			fmt.Fprintf(&b, "<b>%s</b>", html.EscapeString(rest))
		}
	}
	b.WriteString("</pre>")
	return b.String()
}

// logHTML is a log's status and current row as an HTML table.
func logHTML(l *mainloop.TrainingLog, title string) string {
	var b strings.Builder
	st := &l.Status
	fmt.Fprintf(&b, `<table class="blocks-log"><caption style="text-align:left"><b>%s</b>: %d iterations, %d epochs done</caption>`,
		html.EscapeString(title), st.IterationsDone, st.EpochsDone)
	b.WriteString("<thead><tr><th style=\"text-align:left\">record</th><th style=\"text-align:right\">value</th></tr></thead><tbody>")
	row := l.CurrentRow()
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, `<tr><td style="text-align:left">%s</td><td style="text-align:right">%s</td></tr>`,
			html.EscapeString(k), html.EscapeString(logValueString(row[k])))
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

// logValueString is a log value as the REPL's log table prints it.
func logValueString(v any) string {
	if f, ok := mainloop.ChannelValue(v); ok {
		return fmt.Sprintf("%.6g", f)
	}
	return fmt.Sprint(v)
}

// mimeBundle encodes display data for JSON: images in base64, text as
// text.
func mimeBundle(data map[string][]byte) map[string]any {
	out := map[string]any{}
	for mime, b := range data {
		if strings.HasPrefix(mime, "image/") && mime != "image/svg+xml" {
			out[mime] = base64.StdEncoding.EncodeToString(b)
		} else {
			out[mime] = string(b)
		}
	}
	if _, ok := out["text/plain"]; !ok {
		out["text/plain"] = "<figure>"
	}
	return out
}
