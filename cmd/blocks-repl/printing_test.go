package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
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
	code, out, errs := runBinary(t, "", "run", "--set", "max_epochs=2", "--set", "train_examples=500", script)
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
