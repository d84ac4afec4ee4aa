package starlib

import (
	"bytes"
	"strings"
	"testing"
)

// max_norm is Blocks' VariableClipping, which core/algorithms provides in
// builds that have it; without it the library says so at the call.
func TestStdlibMaxNorm(t *testing.T) {
	src := `
load("stdlib/regularization.star", "max_norm")
rule = max_norm(1.5, axis=0)
`
	var out bytes.Buffer
	g, err := ExecFile("maxnorm.star", []byte(src), Options{Stdout: &out})
	if err != nil {
		if strings.Contains(err.Error(), "no VariableClipping in this build") {
			t.Skip("blocks.algorithms has no VariableClipping yet")
		}
		t.Fatalf("%v\n%s", err, Backtrace(err))
	}
	if typ := g["rule"].Type(); !strings.Contains(typ, "VariableClipping") && !strings.Contains(typ, "StepRule") {
		t.Errorf("max_norm returned a %s", typ)
	}
}

// Errors inside the library point at the script line that called it.
func TestStdlibErrorBacktrace(t *testing.T) {
	src := `
load("stdlib/regularization.star", "l2_penalty")
l2_penalty([], 0.1)
`
	_, err := ExecFile("caller.star", []byte(src), Options{})
	if err == nil {
		t.Fatal("no error")
	}
	bt := Backtrace(err)
	if !strings.Contains(bt, "caller.star:3") || !strings.Contains(bt, "stdlib/regularization.star") {
		t.Errorf("backtrace:\n%s", bt)
	}
}
