package main

import (
	"strings"
	"testing"
)

// TestHelpSignatureFromTable: :help of a class made from a table starts
// with Blocks' signature as the table has it, and what **kwargs takes.
func TestHelpSignatureFromTable(t *testing.T) {
	code, out, errs := runBinary(t, ":help Adam\n:help blocks.algorithms.Scale\n")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	for _, want := range []string{
		"blocks.algorithms.Adam(learning_rate=0.002, beta1=0.9, beta2=0.999, epsilon=1e-08, decay_factor=1)\n",
		"blocks.algorithms.Scale(learning_rate=1.0)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf(":help output %q lacks %q", out, want)
		}
	}
}
