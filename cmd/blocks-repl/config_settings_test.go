package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Settings read with config.get are known before training: --print-config
// lists them without training, and an unknown --set fails before the
// first batch, whichever way the script reads its settings.
func TestSettingsKnownBeforeTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	root, _ := filepath.Abs("../..")
	adam := filepath.Join(root, "scripts", "mnist_adam_early_stopping.star")
	code, out, errs := runBinary(t, "", "run", "--print-config", "--set", "patience=5", adam)
	if code != 0 || !strings.HasPrefix(out, "full_mnist = False\ntrain_examples = 2000\n") ||
		!strings.Contains(out, "\npatience = 5  # --set\nmax_epochs = 50\n") || strings.Contains(out, "valid error") {
		t.Errorf("--print-config: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	demo := filepath.Join(root, "scripts", "demo.star")
	code, out, errs = runBinary(t, "", "run", "--set", "epoch=1", demo)
	if code != 1 || !strings.Contains(errs, "--set epoch: the script never reads this setting") ||
		!strings.Contains(errs, "did you mean epochs") || strings.Contains(out, "EPOCH") {
		t.Errorf("a misspelt --set: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	// config(...) and config.get in one script: both are settings.
	mixed := writeScript(t, "mixed.star", `load("blocks.config", "config")
load("tensor", "scalar", "function")
cfg = config(epochs = 2)
extra = config.get("extra", 1)
x = scalar("x")
f = function([x], x + extra)
print("EXTRA", f(1.0).tolist(), cfg.epochs)
`)
	code, out, errs = runBinary(t, "", "run", "--set", "extra=5", mixed)
	if code != 0 || !strings.Contains(out, "EXTRA 6.0 2") {
		t.Errorf("config.get after config(): exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	code, out, errs = runBinary(t, "", "run", "--print-config", "--set", "extra=5", mixed)
	if code != 0 || out != "epochs = 2\nextra = 5  # --set\n" {
		t.Errorf("--print-config of config() and config.get: exit %d\nstdout:\n%q\nstderr:\n%s", code, out, errs)
	}
	code, out, errs = runBinary(t, "", "run", "--set", "extr=5", mixed)
	if code != 1 || !strings.Contains(errs, "extr: not a tunable of this script; its tunables are: epochs, extra (did you mean extra?)") || strings.Contains(out, "EXTRA") {
		t.Errorf("unknown name: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
