package scripts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/internal/fixtures"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
)

// Short runs of the dropout and weight-noise scripts on the embedded MNIST
// subset: two epochs over 2,500 examples (100 iterations). Each trains, monitors the clean
// graph on the test set and prints its error; two runs with the same seed
// give identical logs (the masks and the noise come from the seed).
func TestDropoutAndWeightNoiseScripts(t *testing.T) {
	for _, c := range []struct {
		script, knob, on, off, want string
	}{
		{"mnist_dropout.star", "drop_prob", "0.5", "0", "drop_prob 0.5, 2 epochs on embedded: test error "},
		{"mnist_weight_noise.star", "level", "0.05", "0", "weight noise 0.05, 2 epochs on embedded: test error "},
	} {
		// One checkpoint path for the runs whose printed logs are compared.
		save := filepath.Join(t.TempDir(), "checkpoint.tar")
		ov := map[string]string{"epochs": "2", "examples": "2500", "hidden": "100", "learning_rate": "0.2", c.knob: c.on, "save_to": save}
		g1, out1 := run(t, c.script, ov)
		if !strings.Contains(out1, c.want) {
			t.Errorf("%s printed:\n%s", c.script, out1)
		}
		e1 := logValue(t, g1, 100, "test_error_rate")
		if e1 <= 0 || e1 > 0.5 {
			t.Errorf("%s: test error %v after 100 iterations", c.script, e1)
		}
		g2, out2 := run(t, c.script, ov)
		if out1 != out2 || logValue(t, g2, 100, "train_cost") != logValue(t, g1, 100, "train_cost") {
			t.Errorf("%s: two runs with the same seed differ", c.script)
		}
		ov[c.knob] = c.off
		g3, _ := run(t, c.script, ov)
		if logValue(t, g3, 100, "train_cost") == logValue(t, g1, 100, "train_cost") {
			t.Errorf("%s: the training cost is the same with %s=%s and %s", c.script, c.knob, c.off, c.on)
		}
	}
}

// TestAcceptDropout compares the dropout script with the same script
// without dropout on full MNIST, 50 epochs each (BLOCKS_ACCEPT=1, and MNIST
// in the shared data; about 10 minutes each on 2 cores): measured 1.52%
// with dropout, 1.78% without (docs/regularization.md).
func TestAcceptDropout(t *testing.T) {
	if os.Getenv("BLOCKS_ACCEPT") != "1" {
		t.Skip("set BLOCKS_ACCEPT=1")
	}
	dir := fixtures.Shared(t, "data/mnist")
	t.Setenv("FUEL_DATA_PATH", dir)
	errs := map[string]float64{}
	for _, dp := range []string{"0.5", "0"} {
		g, out := run(t, "mnist_dropout.star", map[string]string{"dataset": "mnist", "epochs": "50", "drop_prob": dp})
		ml := g["main_loop"].(*starblocks.MainLoop)
		errs[dp] = logValue(t, g, ml.M.Log.Status.IterationsDone, "test_error_rate")
		t.Logf("drop_prob %s: %s", dp, lastLine(out))
	}
	if errs["0.5"] >= errs["0"] {
		t.Errorf("dropout test error %.4f, not below %.4f without", errs["0.5"], errs["0"])
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
