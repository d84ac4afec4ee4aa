package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/train/checkpoint"
)

// TestDistributedVAE: the VAE of vae_kill_test.go (a script Random
// brick's theano_rng sample in the training graph, a prior draw only the
// validation monitor makes) gives the same parameters, log and generators
// of every draw on 1 and 2 processes with 4 microbatches, as dropout does
// (TestDistributedDropout): each draw's generator gives microbatch k the
// k-th of the step's seeds, whichever process computes it.
func TestDistributedVAE(t *testing.T) {
	needMPI(t)
	script := writeScript(t, "vae.star", strings.Replace(vaeKillScript, "FinishAfter(after_n_epochs = 3)", "FinishAfter(after_n_epochs = 2)", 1))
	ck := func(name string, args ...string) *checkpoint.Checkpoint {
		d := newDir(t, name)
		out := runIn(t, d, append(args, "--microbatches", "4", script)...)
		if !strings.Contains(out, "finished 24") {
			t.Fatalf("%s: output\n%s", name, out)
		}
		return readCkpt(t, filepath.Join(d, "run.tar"))
	}
	one := ck("one", "run")
	two := ck("two", "run", "--np", "2")
	const what = "K=4, 2 processes"
	sameState(t, what, one, two, true)
	if n := len(one.Iteration.RandomStreams); n != 2 {
		t.Fatalf("%s: %d stream draws, want 2", what, n)
	}
	if !reflect.DeepEqual(one.Iteration.RandomOps, two.Iteration.RandomOps) {
		t.Errorf("%s: the random ops' generators are elsewhere than on one process", what)
	}
	if !reflect.DeepEqual(one.Iteration.RandomStreams, two.Iteration.RandomStreams) {
		t.Errorf("%s: the random streams' generators are elsewhere than on one process", what)
	}
}
