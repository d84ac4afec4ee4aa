package scripts

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMakeFuzzRunsEveryTarget: `make fuzz` runs every native fuzz target
// of the module, so a new Fuzz function cannot be left out of it.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^FUZZ_TARGETS := (.*)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("Makefile: no FUZZ_TARGETS line")
	}
	listed := strings.Fields(string(m[1]))
	decl := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	var found []string
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range decl.FindAllSubmatch(src, -1) {
			found = append(found, "./"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../")))+":"+string(f[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("found no fuzz targets")
	}
	slices.Sort(found)
	for _, f := range found {
		if !slices.Contains(listed, f) {
			t.Errorf("fuzz target %s is not in the Makefile's FUZZ_TARGETS", f)
		}
	}
	for _, l := range listed {
		if _, ok := slices.BinarySearch(found, l); !ok {
			t.Errorf("FUZZ_TARGETS lists %s, which no test file declares", l)
		}
	}
}
