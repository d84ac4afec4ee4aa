package core_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"

	. "github.com/blocks-go/blocks/core"
	_ "github.com/blocks-go/blocks/core/exec/cpu"
)

// Data fed to a compiled function is cast as Theano casts it, for every
// pair of nd's numeric dtypes: accepted exactly when numpy's safe cast
// (Theano's upcast of the two is the input's dtype) allows it, converted
// to the input's dtype with its values, and refused otherwise with the
// message naming both dtypes. Debian's numpy is the reference.
func TestFeedCastsAsTheano(t *testing.T) {
	const py = "/usr/bin/python3"
	dts := nd.NumericDTypes()
	var names []string
	for _, d := range dts {
		names = append(names, d.String())
	}
	out, err := exec.Command(py, append([]string{"-c", `
import sys, numpy
ds = sys.argv[1:]
print(" ".join("".join("1" if numpy.can_cast(f, t, "safe") else "0" for t in ds) for f in ds))
`}, names...)...).Output()
	if err != nil {
		t.Skipf("%s with numpy is the reference: %v", py, err)
	}
	rows := strings.Fields(string(out))
	for i, from := range dts {
		for j, to := range dts {
			want := rows[i][j] == '1'
			x := NewInput("x", to, 1)
			f, err := Compile([]*Variable{x}, []*Variable{Mul(x, Const(to, 1))}, nil)
			if err != nil {
				t.Fatal(err)
			}
			data := nd.New(from, 3)
			for k := range 3 {
				data.SetFlat(k, float64(k%2)) // 0 and 1: every dtype holds them
			}
			res, err := f.Call([]*nd.Array{data})
			switch {
			case want && err != nil:
				t.Errorf("%s data into a %s input: %v (numpy casts it safely)", from, to, err)
			case want && (res[0].DType() != to || res[0].Flat(0) != 0 || res[0].Flat(1) != 1 || res[0].Flat(2) != 0):
				t.Errorf("%s data into a %s input gives %s %v", from, to, res[0].DType(), res[0].Float64s())
			case !want && err == nil:
				t.Errorf("%s data into a %s input accepted (numpy's safe cast refuses it: values can be lost)", from, to)
			case !want && !(strings.Contains(err.Error(), "got "+from.String()+" data") && strings.Contains(err.Error(), "convert the data to "+to.String())):
				t.Errorf("%s data into a %s input: error %q does not name both dtypes", from, to, err)
			}
		}
	}
}

// A kernel meeting a dtype it has no loop for is an error naming the op
// and the dtype, never a zero output: here softmax's kernel, reached with
// an int8 input by building the node without its type check.
func TestKernelRefusesUnsupportedDType(t *testing.T) {
	x := NewInput("x", nd.Int8, 2)
	y := UncheckedSoftmax(x, nd.Int8)
	f, err := Compile([]*Variable{x}, []*Variable{y}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Call([]*nd.Array{nd.New(nd.Int8, 2, 3)})
	if err == nil || !strings.Contains(err.Error(), "no kernel for dtype int8") {
		t.Fatalf("softmax of int8 data: error %v, want one naming dtype int8", err)
	}
}
