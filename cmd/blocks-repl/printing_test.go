package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Printing shows each number in the shortest form that reads back to the
// same value of its dtype, as numpy prints it: an error rate over 1,000
// examples has at most three decimals, in the row and in the status.
func TestPrintingShortestNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	src, err := os.ReadFile("../../scripts/mnist_adam_early_stopping.star")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), `load("blocks.extensions", `, `load("blocks.extensions", "Printing", `, 1)
	s = strings.Replace(s, `SimpleExtension(report, name = "report", after_epoch = True),`, `SimpleExtension(report, name = "report", after_epoch = True), Printing(),`, 1)
	script := writeScript(t, "adam.star", s)
	code, out, errs := runBinary(t, "", "run", "--set", "max_epochs=2", "--set", "train_examples=500",
		"--set", "save_to="+filepath.Join(filepath.Dir(script), "mnist.tar"), script)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, name := range []string{"valid_error_rate", "best_valid_error_rate"} {
		all := regexp.MustCompile(`\t `+name+`: (\S+)\n`).FindAllStringSubmatch(out, -1)
		if len(all) == 0 {
			t.Fatalf("no %s printed:\n%s", name, out)
		}
		for _, m := range all {
			if !regexp.MustCompile(`^0\.\d{1,3}$`).MatchString(m[1]) {
				t.Errorf("%s printed as %s, want at most three decimals", name, m[1])
			}
		}
	}
}

// Small wording and file-mode items: "is an int", and a --log file made
// like other outputs (0644 less the umask), not 0600.
func TestLogFileModeAndArticles(t *testing.T) {
	script := writeScript(t, "s.star", "load('blocks.config', 'config')\nn = config.get('epochs', 5)\n")
	code, _, errs := runBinary(t, "", "run", "--set", "epochs=many", script)
	if code != 1 || !strings.Contains(errs, "gives a string, but the default 5 is an int") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exp.star"), []byte(fmt.Sprintf(smallLoop, "")+"main_loop.run()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWatched(t, dir, nil, "run", "--log", "log.jsonl", "exp.star")
	if code := w.exitCode(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, w.stderr())
	}
	st, err := os.Stat(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o044 == 0 {
		t.Errorf("the log is %v, want readable by others as other outputs are", st.Mode().Perm())
	}
}

// plot of a CSV log says which formats plot, instead of a JSON error.
func TestPlotCSVSaysWhichFormats(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "log.csv")
	if err := os.WriteFile(csv, []byte("iteration,cost\n0,1.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runBinary(t, "", "plot", csv, "--channels", "cost")
	if code == 0 || !strings.Contains(errs, "plot reads JSON-lines logs (.jsonl) and SQLite logs (.sqlite, .db), not CSV") || strings.Contains(errs, "invalid character") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}
