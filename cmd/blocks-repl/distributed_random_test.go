package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// TestDistributedDropout: scripts/mnist_dropout.star (dropout on both
// hidden layers, a shuffled scheme, test-set monitoring of the clean
// graph) gives the same parameters, log and dropout generators' states on
// 1 and 2 processes with 4 microbatches, and on 1 and 3 with 6, each
// process reading only its microbatches.
func TestDistributedDropout(t *testing.T) {
	needMPI(t)
	src, err := os.ReadFile("../../scripts/mnist_dropout.star")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "Checkpoint(save_to") {
		t.Fatal("the script has no Checkpoint(save_to, ...): update the test")
	}
	script := writeScript(t, "dropout.star", string(src))
	for _, c := range []struct {
		k   string
		nps []string
	}{{"4", []string{"2"}}, {"6", []string{"3"}}} {
		set := []string{"--microbatches", c.k, "--set", "examples=400", "--set", "hidden=32", "--set", "epochs=2", "--set", "save_to=ck.tar", script}
		ck := func(name string, args ...string) *checkpoint.Checkpoint {
			d := newDir(t, name)
			out := runIn(t, d, append(args, set...)...)
			if strings.Count(out, "drop_prob 0.5, 2 epochs") != 1 {
				t.Fatalf("%s: output\n%s", name, out)
			}
			return readCkpt(t, filepath.Join(d, "ck.tar"))
		}
		one := ck("one"+c.k, "run")
		for _, np := range c.nps {
			more := ck("k"+c.k+"np"+np, "run", "--np", np)
			what := fmt.Sprintf("K=%s, %s processes", c.k, np)
			sameState(t, what, one, more, true)
			a, b := one.Iteration.RandomOps, more.Iteration.RandomOps
			if len(a) == 0 || len(a) != len(b) {
				t.Fatalf("%s: random ops' states: %d and %d", what, len(a), len(b))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("%s: random op %d (%s): its generator is elsewhere", what, i, a[i].Owner)
				}
			}
		}
	}
}
