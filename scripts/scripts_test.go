// Package scripts holds the example experiments; this test runs each of
// them and checks their published or closed-form numbers.
package scripts

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
)

func run(t testing.TB, script string, overrides map[string]string) (starlark.StringDict, string) {
	t.Helper()
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	overrides = checkpointInTempDir(t, src, overrides)
	var out bytes.Buffer
	globals, err := starlib.ExecFile(script, src, starlib.Options{Stdout: &out, Overrides: overrides, Library: all.Library()})
	if err != nil {
		t.Fatalf("%s: %v\n%s\noutput:\n%s", script, err, starlib.Backtrace(err), out.String())
	}
	return globals, out.String()
}

// checkpointInTempDir sets save_to, the checkpoint path of a training
// script that has one, to a file in a temporary directory unless the test
// sets it: the scripts save into the working directory by default, and no
// test writes into the repository.
func checkpointInTempDir(t testing.TB, src []byte, overrides map[string]string) map[string]string {
	t.Helper()
	if !bytes.Contains(src, []byte("save_to")) {
		return overrides
	}
	if _, ok := overrides["save_to"]; ok {
		return overrides
	}
	with := map[string]string{"save_to": filepath.Join(t.TempDir(), "checkpoint.tar")}
	for k, v := range overrides {
		with[k] = v
	}
	return with
}

func logValue(t *testing.T, g starlark.StringDict, iteration int, key string) float64 {
	t.Helper()
	ml := g["main_loop"].(*starblocks.MainLoop)
	row, ok := ml.M.Log.Lookup(iteration)
	if !ok {
		t.Fatalf("no log row %d", iteration)
	}
	v, ok := row[key]
	if !ok {
		t.Fatalf("log row %d has no %s: %v", iteration, key, row)
	}
	f, ok := starlark.AsFloat(starlibValue(v))
	if !ok {
		t.Fatalf("%s = %v is not a number", key, v)
	}
	return f
}

func starlibValue(v any) starlark.Value {
	d := starlark.NewDict(1)
	_ = d
	switch x := v.(type) {
	case interface{ Flat(int) float64 }:
		return starlark.Float(x.Flat(0))
	case float64:
		return starlark.Float(x)
	}
	return starlark.None
}

// TestAcceptMNISTTutorial runs the Blocks tutorial on full MNIST (make
// accept: the real data) and checks the
// numbers the Blocks documentation publishes: test_cost_with_regularization
// 2.342 before training and 0.6649 after the one epoch of 235 iterations.
// Tolerances: ±0.01 before (only the initial draw and float32 rounding
// differ) and ±0.03 after, as the issue sets them.
func TestAcceptMNISTTutorial(t *testing.T) {
	t.Setenv("FUEL_DATA_PATH", fixtures.Shared(t, "data/mnist"))
	g, out := run(t, "mnist_tutorial.star", nil)
	before := logValue(t, g, 0, "test_cost_with_regularization")
	after := logValue(t, g, 235, "test_cost_with_regularization")
	t.Logf("test_cost_with_regularization: %.4f before, %.4f after", before, after)
	if math.Abs(before-2.342) > 0.01 {
		t.Errorf("before training: %.4f, Blocks publishes 2.342", before)
	}
	if math.Abs(after-0.6649) > 0.03 {
		t.Errorf("after one epoch: %.4f, Blocks publishes 0.6649", after)
	}
	ml := g["main_loop"].(*starblocks.MainLoop)
	if ml.M.Log.Status.IterationsDone != 235 || ml.M.Log.Status.EpochsDone != 1 {
		t.Errorf("status %+v, want 235 iterations and 1 epoch", ml.M.Log.Status)
	}
	if !strings.Contains(out, "test_cost_with_regularization") {
		t.Errorf("Printing output lacks the monitored record:\n%s", out)
	}
}

// TestDemo runs what make demo runs, for one epoch, and checks that it
// learns: the test error on the embedded subset falls below 20%.
func TestDemo(t *testing.T) {
	g, out := run(t, "demo.star", map[string]string{"epochs": "1"})
	ml := g["main_loop"].(*starblocks.MainLoop)
	errRate := logValue(t, g, ml.M.Log.Status.IterationsDone, "test_error_rate")
	if errRate > 0.2 {
		t.Errorf("test error after one epoch %.3f, want below 0.2\n%s", errRate, out)
	}
	if !strings.Contains(out, "test error after 1 epochs") {
		t.Errorf("demo output lacks its summary line:\n%s", out)
	}
}
