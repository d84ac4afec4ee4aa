package main

import (
	"strings"
	"testing"
)

// The memory regressions of the third hardening round (issue 32, item
// 4), through the real binary: allocations that skipped the memory check
// ended in Go's fatal "runtime: out of memory" (a runtime dump) or grew
// far past --max-memory. Every array and buffer now goes through one
// accounting point (nd.CheckBudget, called by nd.New), and a script whose
// strings or lists take the heap past the budget is stopped.

// TestAllocationsGoThroughTheBudget: each allocation is refused, before
// it is made, with an error at the script's line.
func TestAllocationsGoThroughTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	pre := "load(\"numpy\", \"tile\", \"ones\", \"zeros\", \"concatenate\", \"random\")\n" +
		"load(\"blocks.utils\", \"shared_floatx_zeros\")\nload(\"blocks.bricks\", \"Linear\")\n"
	machine := "more than the machine's memory"
	budget := "more than the run's memory budget (--max-memory)"
	for _, c := range []struct {
		name, mem, expr, want string
	}{
		{"tile", "", "tile(ones((2,)), (1 << 40,))", machine},
		{"concatenate", "", "concatenate([zeros((1 << 20,))] * 4000)", machine},
		{"permutation", "", "random.RandomState(1).permutation(1 << 40)", machine},
		{"shared_floatx_zeros", "", "shared_floatx_zeros((1 << 40,))", machine},
		{"linear-initialize", "", "Linear(input_dim = 1 << 20, output_dim = 1 << 20).initialize()", machine},
		{"tile-10M", "10M", "tile(ones((2,)), (1 << 28,))", budget + " (10.0 MiB)"},
		{"concatenate-100M", "100M", "concatenate([zeros((1 << 20,))] * 40)", budget + " (100.0 MiB)"},
		{"permutation-10M", "10M", "random.RandomState(1).permutation(1 << 21)", budget + " (10.0 MiB)"},
		{"linear-10M", "10M", "Linear(input_dim = 1 << 11, output_dim = 1 << 11).initialize()", budget + " (10.0 MiB)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := writeScript(t, "bad.star", pre+"x = "+c.expr+"\nprint(\"allocated\")\n")
			args := []string{"run"}
			if c.mem != "" {
				args = append(args, "--max-memory", c.mem)
			}
			code, out, stderr := runBinary(t, "", append(args, script)...)
			noGoTrace(t, stderr)
			if code != 1 || out != "" || !strings.Contains(stderr, "bad.star:4") || !strings.Contains(stderr, c.want) ||
				strings.Contains(stderr, "internal error") || strings.Contains(stderr, "out of memory") {
				t.Errorf("%s: exit %d, stdout %q, want an error at bad.star:4 with %q; stderr:\n%s", c.expr, code, out, c.want, stderr)
			}
		})
	}
}

// TestScriptHeapOverBudgetStops: strings and lists grow inside
// go.starlark.net, where no array check sees them: ("ab" * (1 << 24))
// .replace(...) twice reached 1.4 GB under --max-memory 100M. The run
// is stopped once its heap exceeds the budget (each script below would
// otherwise run until --max-steps).
func TestScriptHeapOverBudgetStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	for name, src := range map[string]string{
		"string-replace": "a = \"ab\" * (1 << 22)\nb = a.replace(\"a\", \"a\" * 40)\nwhile True:\n    pass\n",
		"list-append":    "l = []\nwhile True:\n    l.append(len(l))\n",
	} {
		t.Run(name, func(t *testing.T) {
			script := writeScript(t, "grow.star", src)
			code, out, stderr := runBinary(t, "", "run", "--max-memory", "50M", "--max-steps", "2000000000", script)
			noGoTrace(t, stderr)
			if code != 1 || out != "" || !strings.Contains(stderr, "grow.star:") ||
				!strings.Contains(stderr, "exceeds the run's memory budget (--max-memory) (50.0 MiB)") {
				t.Errorf("exit %d, stdout %q; stderr:\n%s", code, out, stderr)
			}
		})
	}
}
