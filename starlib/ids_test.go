package starlib_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestIDsSameEveryRun: id() and the brick repr that shows it are the
// same numbers on every run of a script (a counter, not an address).
func TestIDsSameEveryRun(t *testing.T) {
	src := []byte(`load("blocks.bricks", "Linear", "MLP", "Tanh")
x = [1]
lin = Linear(name = "lin")
mlp = MLP([Tanh()], [2, 3])
print(id(x), id((1, 2)), id(lin), id(mlp.children[0]), lin, mlp.children)
`)
	run := func() string {
		var out bytes.Buffer
		if _, err := starlib.ExecFile("ids.star", src, starlib.Options{Stdout: &out, Library: all.Library()}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	first := run()
	if !strings.Contains(first, "<blocks.bricks.simple.Linear object at 0x") || !strings.Contains(first, ": name=lin>") {
		t.Fatalf("the brick's repr: %q", first)
	}
	for i := 0; i < 3; i++ {
		if again := run(); again != first {
			t.Fatalf("run %d printed %q, the first %q", i+2, again, first)
		}
	}
}
