package scripts

import (
	"math"
	"os"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/internal/fixtures"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	"github.com/blocks-go/blocks/train/mainloop"
)

// TestMNISTAdamEarlyStopping runs scripts/mnist_adam_early_stopping.star
// on 1,000 training examples with a patience of 2 epochs and checks, from
// the log alone, that training stopped exactly when the patience ran out,
// that the best epoch and value are the log's, and that the learning rate
// followed its schedule.
func TestMNISTAdamEarlyStopping(t *testing.T) {
	g, out := run(t, "mnist_adam_early_stopping.star", map[string]string{
		"train_examples": "1000", "patience": "2", "max_epochs": "30"})
	epochs, best, bestEpoch := checkEarlyStopping(t, g, 2, 30)
	if best > 0.2 {
		t.Errorf("best validation error %v: the model did not learn", best)
	}
	if !strings.Contains(out, "stopping") {
		t.Errorf("output:\n%s", out)
	}
	t.Logf("stopped after %d epochs, best %v at epoch %d\n%s", epochs, best, bestEpoch, out)
}

// TestAcceptMNISTAdamEarlyStopping runs the script on full MNIST (50,000
// training and 10,000 validation images) with its defaults (patience 3).
func TestAcceptMNISTAdamEarlyStopping(t *testing.T) {
	if os.Getenv("BLOCKS_ACCEPT") != "1" {
		t.Skip("BLOCKS_ACCEPT=1 runs it (make accept)")
	}
	t.Setenv("FUEL_DATA_PATH", fixtures.Shared(t, "data/mnist"))
	g, out := run(t, "mnist_adam_early_stopping.star", map[string]string{"full_mnist": "True"})
	epochs, best, bestEpoch := checkEarlyStopping(t, g, 3, 50)
	t.Logf("full MNIST: stopped after %d epochs, best validation error %v at epoch %d\n%s", epochs, best, bestEpoch, out)
	// A 784-100-10 rectifier MLP reaches about 2-3% on MNIST.
	if best > 0.035 {
		t.Errorf("best validation error %v", best)
	}
}

// checkEarlyStopping checks, from the log alone, that training stopped
// exactly when the patience ran out, the best epoch and value, and the
// learning-rate schedule (0.003 times 0.9 per epoch).
func checkEarlyStopping(t *testing.T, g starlark.StringDict, patience, maxEpochs int) (epochs int, best float64, bestEpoch int) {
	t.Helper()
	const lr0, decay = 0.003, 0.9
	m := g["main_loop"].(*starblocks.MainLoop).M
	st := m.Log.Status
	epochs = st.EpochsDone
	if epochs >= maxEpochs {
		t.Fatalf("ran all %d epochs: early stopping never fired", epochs)
	}
	if len(st.EpochEnds) != epochs {
		t.Fatalf("%d epoch ends for %d epochs", len(st.EpochEnds), epochs)
	}
	num := func(it int, key string) (float64, bool) {
		row, _ := m.Log.Lookup(it)
		v, ok := row[key]
		if !ok {
			return 0, false
		}
		f, ok := mainloop.LogNumber(v)
		return f, ok
	}
	best, bestEpoch = math.Inf(1), 0
	for e := 1; e <= epochs; e++ {
		it := st.EpochEnds[e-1]
		errRate, ok := num(it, "valid_error_rate")
		if !ok {
			t.Fatalf("epoch %d: no valid_error_rate", e)
		}
		row, _ := m.Log.Lookup(it)
		isBest := errRate < best
		if got := row["valid_error_rate_best_so_far"] == true; got != isBest {
			t.Errorf("epoch %d (error %v, best before %v): best_so_far %v", e, errRate, best, row["valid_error_rate_best_so_far"])
		}
		if isBest {
			best, bestEpoch = errRate, e
		}
		if p, ok := num(it, "valid_error_rate_best_so_far_patience_epochs"); !ok || int(p) != patience-(e-bestEpoch) {
			t.Errorf("epoch %d: patience %v, want %d", e, row["valid_error_rate_best_so_far_patience_epochs"], patience-(e-bestEpoch))
		}
		stop := mainloopTruthy(row["training_finish_requested"])
		if stop != (e == epochs) {
			t.Errorf("epoch %d: training_finish_requested %v", e, row["training_finish_requested"])
		}
		// The schedule: learning_rate *= decay after every epoch (float32).
		lr, _ := num(it, "learning_rate")
		if want := lr0 * math.Pow(decay, float64(e)); math.Abs(lr-want) > 1e-6*want*float64(e) {
			t.Errorf("epoch %d: learning_rate %v, want %v", e, lr, want)
		}
	}
	if epochs != bestEpoch+patience {
		t.Errorf("stopped after epoch %d; the best was epoch %d, patience %d", epochs, bestEpoch, patience)
	}
	// The status keeps the record's dtype (float32), so that it prints
	// as the record does.
	if v, _ := st.Get("best_valid_error_rate"); v != any(float32(best)) {
		t.Errorf("status best_valid_error_rate %v, log minimum %v", v, best)
	}
	if lr, _ := num(0, "learning_rate"); math.Abs(lr-lr0) > 1e-9 {
		t.Errorf("learning rate before training %v", lr)
	}
	return epochs, best, bestEpoch
}

func mainloopTruthy(v any) bool { b, ok := v.(bool); return ok && b }
