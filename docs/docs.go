// Package docs holds the project's user documentation (the Markdown files
// beside this one, which the README links) and finds the section that
// documents a name, for the interactive session's :help.
//
// A section is a Markdown heading and the text under it up to the next
// heading. A heading documents the names it
// shows in backquotes: "### `MLP(activations, dims)`" documents MLP, and
// "## `blocks.bricks`" the module blocks.bricks.
package docs

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.md
var files embed.FS

// Section is one documented name: where it is and its text.
type Section struct {
	File    string // the Markdown file, e.g. "reference.md"
	Heading string // the heading line without its leading #s
	Text    string // the heading and the text under it, to the next heading
}

// Lookup returns the documentation of name: a dotted module name
// (blocks.bricks), a name (MLP) or a qualified one (blocks.bricks.MLP,
// matched by its last component when nothing has the whole of it). It
// looks, in order of preference, for sections whose heading shows the
// name in backquotes; then for table rows and list items that start with
// it (returned with the table's header and the section's heading); then
// for sections whose text shows it as a call or a name in backquotes (at
// most three). Files are searched sorted by name, reference.md first.
func Lookup(name string) []Section {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil
	}
	if found := lookup(name); len(found) > 0 {
		return found
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return lookup(name[i+1:])
	}
	return nil
}

func lookup(name string) []Section {
	all := sections()
	var found []Section
	for _, s := range all {
		if documents(s.Heading, name) {
			found = append(found, s)
		}
	}
	if len(found) > 0 {
		return found
	}
	for _, s := range all {
		found = append(found, rows(s, name)...)
	}
	if len(found) > 0 {
		return found
	}
	for _, s := range all {
		if mentions(s.Text, name) {
			found = append(found, s)
			if len(found) == 3 {
				break
			}
		}
	}
	return found
}

// rows returns the table rows and list items of s that start with name
// in backquotes, each as a section of its own (a row with its table's
// header).
func rows(s Section, name string) []Section {
	lines := strings.Split(s.Text, "\n")
	var out []Section
	header := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		var first string
		switch {
		case strings.HasPrefix(t, "|"):
			if i+1 < len(lines) && isSeparator(lines[i+1]) {
				header = t + "\n" + strings.TrimSpace(lines[i+1])
				continue
			}
			if isSeparator(t) {
				continue
			}
			first = strings.SplitN(strings.Trim(t, "|"), "|", 2)[0]
		case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "):
			first = t[2:]
		default:
			if t == "" {
				header = ""
			}
			continue
		}
		if !startsWithCode(strings.TrimSpace(first), name) {
			continue
		}
		text := t
		if strings.HasPrefix(t, "|") && header != "" {
			text = header + "\n" + t
		}
		out = append(out, Section{File: s.File, Heading: s.Heading, Text: "(" + s.Heading + ")\n" + text})
	}
	return out
}

// isSeparator reports whether a line is a Markdown table's header rule.
func isSeparator(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "|") && strings.Trim(t, "|-: ") == ""
}

// startsWithCode reports whether text starts with a code span that
// documents name, or lists it among several (`Mean`, `TakeLast`).
func startsWithCode(text, name string) bool {
	if !strings.HasPrefix(text, "`") {
		return false
	}
	for _, span := range codeSpans(text) {
		if documents("`"+span+"`", name) {
			return true
		}
	}
	return false
}

// codeSpans are the backquoted spans of text.
func codeSpans(text string) []string {
	var spans []string
	for {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			return spans
		}
		j := strings.IndexByte(text[i+1:], '`')
		if j < 0 {
			return spans
		}
		spans = append(spans, text[i+1:i+1+j])
		text = text[i+2+j:]
	}
}

// mentions reports whether text shows name in backquotes, alone or as a
// call.
func mentions(text, name string) bool {
	for _, span := range codeSpans(text) {
		if documents("`"+span+"`", name) {
			return true
		}
	}
	return false
}

// documents reports whether a heading shows name in backquotes, alone or
// followed by an argument list.
func documents(heading, name string) bool {
	for rest := heading; ; {
		i := strings.IndexByte(rest, '`')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		j := strings.IndexByte(rest, '`')
		if j < 0 {
			return false
		}
		code := rest[:j]
		rest = rest[j+1:]
		if k := strings.IndexAny(code, "( ="); k >= 0 {
			code = code[:k]
		}
		if code == name {
			return true
		}
	}
}

func sections() []Section {
	names, _ := fs.Glob(files, "*.md")
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "reference.md") != (names[j] == "reference.md") {
			return names[i] == "reference.md"
		}
		return names[i] < names[j]
	})
	var out []Section
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			continue
		}
		out = append(out, split(name, string(data))...)
	}
	return out
}

// split cuts a Markdown file into its sections (headings inside fenced
// code blocks are not headings).
func split(file, text string) []Section {
	lines := strings.Split(text, "\n")
	type head struct{ line, level int }
	var heads []head
	// A section ends at the next heading, whatever its level: :help shows
	// what documents one name, not a whole chapter.
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		level := len(l) - len(strings.TrimLeft(l, "#"))
		if level < len(l) && l[level] == ' ' {
			heads = append(heads, head{i, level})
		}
	}
	var out []Section
	for k, h := range heads {
		end := len(lines)
		if k+1 < len(heads) {
			end = heads[k+1].line
		}
		out = append(out, Section{
			File:    file,
			Heading: strings.TrimSpace(lines[h.line][h.level:]),
			Text:    strings.TrimRight(strings.Join(lines[h.line:end], "\n"), "\n"),
		})
	}
	return out
}
