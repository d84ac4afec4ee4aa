// Package stdlib is library code written in Starlark and embedded in the
// binary: scripts load it as load("stdlib/regularization.star", "l2_penalty").
// The files are plain .star sources in this directory; FS holds them.
package stdlib

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// FS holds the library's .star files, at their names (regularization.star).
//
//go:embed *.star
var FS embed.FS

// Prefix is how scripts name the library in load(): "stdlib/NAME.star".
const Prefix = "stdlib/"

// Source returns the text of the library file load() names (with the
// "stdlib/" prefix).
func Source(module string) ([]byte, error) {
	name := strings.TrimPrefix(module, Prefix)
	b, err := FS.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("no library file %q (the library has: %s)", module, strings.Join(Files(), ", "))
	}
	return b, nil
}

// Files lists the library's files as load() names them.
func Files() []string {
	var out []string
	_ = fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, Prefix+path)
		}
		return nil
	})
	return out
}
