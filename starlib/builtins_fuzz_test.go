package starlib_test

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// callables lists every callable member of every module of the library, by
// "module.name", sorted: what FuzzBuiltins calls.
func callables(t testing.TB) ([]string, map[string]starlark.Callable) {
	t.Helper()
	m := map[string]starlark.Callable{}
	lib := testLibrary()
	for _, mod := range lib.Names() {
		lm, ok := lib.Lookup(mod)
		if !ok {
			continue
		}
		for name, v := range lm.Members {
			if c, ok := v.(starlark.Callable); ok {
				m[mod+"."+name] = c
			}
		}
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, m
}

// fuzzValues are the argument values the fuzzer draws from: every
// Starlark type, edge numbers, strings builtins look for, nested lists,
// symbolic variables and arrays. Sizes stay small: a script asking for a
// terabyte array is refused by the operating system, not by a builtin.
const fuzzValueSource = `
load("tensor", "matrix", "vector", "lmatrix", "scalar")
load("numpy", "zeros", "ones", "arange")
values = [
    None, True, False, 0, 1, -1, 2, 3, 7, 100, -100, 0.0, 0.5, -2.5, float("nan"), float("inf"), float("-inf"),
    "", "x", "float32", "int64", "uint8", "features", "targets", "train", "valid", "full", "half", "mean",
    [], [0], [1, 2], [2, 3], [[1, 2], [3, 4]], [None], ["x", "y"], [0.5, -1], [[[1]]],
    (), (1,), (2, 2), ("train",), ("features", "targets"), {}, {"a": 1}, {"features": [[1, 2]]},
    matrix("m"), vector("v"), lmatrix("l"), scalar("s"),
    zeros((2, 3)), ones((3,)), arange(4), zeros((0,)), zeros((1, 1, 2, 2)),
]
`

var fuzzKwargNames = []string{"name", "dims", "activations", "input_dim", "output_dim", "axis", "dtype", "batch_size",
	"which_sets", "sources", "iteration_scheme", "data_stream", "learning_rate", "step_rule", "parameters", "cost",
	"after_n_epochs", "every_n_batches", "prefix", "std", "mean", "width", "seed", "rng", "examples", "shape",
	"which_sources", "scale", "shift", "roles", "bricks", "keepdims", "num_examples", "weights_init", "biases_init",
	"use_bias", "filter_size", "num_filters", "num_channels", "image_size", "step", "border_mode", "pooling_size",
	"drop_prob", "level", "path", "port", "hwm", "mask", "states", "contexts", "iterate", "reverse", "bogus"}

// FuzzBuiltins calls every builtin of every module with arguments of
// random types: a builtin may refuse them, but it must answer with a
// Starlark error, never a Go panic (which the loader's wrapper turns into
// "internal error in NAME") and never hang.
func FuzzBuiltins(f *testing.F) {
	names, fns := callables(f)
	globals, err := starlib.ExecFile("values.star", []byte(fuzzValueSource), starlib.Options{FloatX: "float32", Library: all.Library()})
	if err != nil {
		f.Fatal(err)
	}
	values := globals["values"].(*starlark.List)
	f.Add(uint16(0), []byte{1, 2, 3})
	f.Add(uint16(7), []byte{0x81, 5, 0x90, 9})
	f.Add(uint16(40), []byte{})
	for i := range names {
		f.Add(uint16(i), []byte{byte(i), byte(3 * i), 0x80 | byte(i)})
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint16, plan []byte) {
		name := names[int(which)%len(names)]
		fn := fns[name]
		var args starlark.Tuple
		var kwargs []starlark.Tuple
		seen := map[string]bool{}
		for i, b := range plan {
			if i >= 8 {
				break
			}
			v := values.Index(int(b&0x7f) % values.Len())
			if b&0x80 == 0 {
				args = append(args, v)
				continue
			}
			k := fuzzKwargNames[(int(b)*7+i)%len(fuzzKwargNames)]
			if !seen[k] {
				seen[k] = true
				kwargs = append(kwargs, starlark.Tuple{starlark.String(k), v})
			}
		}
		wd, _ := os.Getwd()
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		in, err := starlib.NewInterp(starlib.Options{FloatX: "float32", Context: ctx, Stdout: discard{}, Library: all.Library()})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := starlark.Call(in.Thread, fn, args, kwargs)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s(%v, %v): %v", name, args, kwargs, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s(%v, %v) did not return in 30s", name, args, kwargs)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
