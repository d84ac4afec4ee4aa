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

// Lookup returns the sections that document name: a dotted module name
// (blocks.bricks), a name (MLP) or a qualified one (blocks.bricks.MLP,
// matched by its last component when no section has the whole of it).
// Sections are in file order, files sorted by name, reference.md first.
func Lookup(name string) []Section {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil
	}
	all := sections()
	var found []Section
	for _, s := range all {
		if documents(s.Heading, name) {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			last := name[i+1:]
			for _, s := range all {
				if documents(s.Heading, last) {
					found = append(found, s)
				}
			}
		}
	}
	return found
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
