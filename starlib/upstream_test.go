package starlib_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestUpstream runs the ports of Blocks' and Fuel's own test suites:
// testdata/upstream/<project>/*.star, golden scripts in TestScripts'
// format (chunks separated by "---", ### error expectations, options,
// the assert module) where every chunk names the upstream test it ports
// on a line
//
//	# test: tests/test_graph.py::test_replace
//
// (several chunks may port one test). A chunk with a line
//
//	# pending: why it does not pass yet
//
// is left out of the default run; BLOCKS_PENDING=1 runs the pending
// chunks too, and the test's log (go test -v) says how many of all the
// chunks passed. docs/upstream-tests-<project>.md is the inventory: one
// table row per upstream test, "| `tests/x.py::test_y` | status | ... |",
// whose status is "ported", "pending" (a chunk that does not pass yet),
// "to port" (portable, no chunk yet) or "not portable"; TestUpstream
// checks that it agrees with the chunks and with the Go ports (see
// goPorts).
func TestUpstream(t *testing.T) {
	dirs, err := filepath.Glob("testdata/upstream/*")
	if err != nil {
		t.Fatal(err)
	}
	runPending := os.Getenv("BLOCKS_PENDING") == "1"
	for _, dir := range dirs {
		project := filepath.Base(dir)
		files, _ := filepath.Glob(filepath.Join(dir, "*.star"))
		status := map[string]string{} // upstream test -> ported or pending
		var passed, total, pending int
		ran := false
		t.Run(project, func(t *testing.T) {
			ran = true
			for _, file := range files {
				for _, c := range readChunks(t, file) {
					name, why := upstreamHeader(c.source)
					if name == "" {
						if strings.TrimSpace(stripComments(c.source)) == "" {
							continue // a file's leading comment
						}
						t.Errorf("%s:%d: chunk without a '# test:' line", file, c.firstLine)
						continue
					}
					if why != "" {
						status[name] = "pending"
						pending++
						if !runPending {
							continue
						}
					} else if status[name] != "pending" {
						status[name] = "ported"
					}
					total++
					c := c
					if t.Run(fmt.Sprintf("%s:%d", strings.ReplaceAll(name, "/", "_"), c.firstLine), func(t *testing.T) {
						if why != "" {
							t.Logf("pending: %s", why)
						}
						runChunk(t, c)
					}) {
						passed++
					}
				}
			}
			if runPending {
				t.Logf("%s: %d of %d chunks pass (%d pending ones run)", project, passed, total, pending)
			} else {
				t.Logf("%s: %d of %d chunks pass (%d pending ones not run)", project, passed, total, pending)
			}
		})
		if ran { // a -run filter may leave the project out
			for name := range goPorts(t, project) {
				if _, ok := status[name]; !ok {
					status[name] = "ported"
				}
			}
			checkInventory(t, project, status)
		}
	}
}

var goPortRE = regexp.MustCompile(`(?m)^\s*//\s*upstream (\w+):\s*(\S+)\s*$`)

// goPorts are the upstream tests of project ported as Go tests (where
// the upstream test exercises what the project has as Go, such as
// fuel/download): a comment line
//
//	// upstream fuel: tests/test_downloaders.py::test_mnist
//
// in a _test.go file of the repository, above the Go test that ports it.
// go test ./... runs them; TestUpstream counts them as ported.
func goPorts(t *testing.T, project string) map[string]bool {
	out := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range goPortRE.FindAllStringSubmatch(string(b), -1) {
			if m[1] == project {
				out[m[2]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("looking for Go ports of %s's tests: %v", project, err)
	}
	return out
}

var (
	testLineRE    = regexp.MustCompile(`(?m)^#\s*test:\s*(\S+)\s*$`)
	pendingLineRE = regexp.MustCompile(`(?m)^#\s*pending:\s*(.+?)\s*$`)
)

// upstreamHeader reads a chunk's "# test:" and "# pending:" lines.
func upstreamHeader(src string) (name, pending string) {
	if m := testLineRE.FindStringSubmatch(src); m != nil {
		name = m[1]
	}
	if m := pendingLineRE.FindStringSubmatch(src); m != nil {
		pending = m[1]
	}
	return name, pending
}

func stripComments(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

var inventoryRowRE = regexp.MustCompile("^\\|\\s*`([^`]+)`\\s*\\|\\s*([a-z ]+?)\\s*\\|")

// checkInventory compares docs/upstream-tests-<project>.md with the chunks.
func checkInventory(t *testing.T, project string, status map[string]string) {
	path := filepath.Join("..", "docs", "upstream-tests-"+project+".md")
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("the inventory of %s's ported tests: %v", project, err)
		return
	}
	defer f.Close()
	listed := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := inventoryRowRE.FindStringSubmatch(sc.Text())
		if m == nil || !strings.Contains(m[1], "::") {
			continue
		}
		if _, dup := listed[m[1]]; dup {
			t.Errorf("%s: %s listed twice", path, m[1])
		}
		listed[m[1]] = m[2]
	}
	var names []string
	for n := range status {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if got := listed[n]; got != status[n] {
			t.Errorf("%s: %s is %q in the inventory, %q in testdata/upstream/%s", path, n, got, status[n], project)
		}
	}
	for n, s := range listed {
		if _, ok := status[n]; !ok && s != "not portable" && s != "to port" {
			t.Errorf("%s: %s is %q but no chunk ports it", path, n, s)
		}
	}
}
