package npy

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

const refPython = "/usr/bin/python3" // Debian's python3 with python3-numpy

// fixture is the array the numpy script below writes for each dtype:
// arange(6) - 2 shaped (2, 3), so signed types get negative values, and
// its non-zero test for bool.
func fixture(dt nd.DType) *nd.Array {
	a := nd.New(dt, 2, 3)
	for i := range 6 {
		a.SetFlat(i, float64(i-2))
	}
	switch d := a.Data.(type) {
	case []uint8:
		for i := range d {
			d[i] = uint8(i - 2) // numpy's wrap-around of arange(6) - 2
		}
	case []uint16:
		for i := range d {
			d[i] = uint16(i - 2)
		}
	}
	return a
}

// dtypes is every numeric dtype of package nd: a dtype added there is
// carried here or these tests fail.
var dtypes = nd.NumericDTypes()

// kindOf is numpy's kind and size of dt ("f4"), from the codec's descr.
func kindOf(t *testing.T, dt nd.DType) string {
	t.Helper()
	d, err := Descr(dt, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	return d[1:]
}

// Every carried dtype, in both byte orders and for 0-d, 1-d and 2-d
// shapes, as numpy.save writes it: Decode reads numpy's file and Encode
// writes numpy's bytes exactly.
func TestAgainstNumpy(t *testing.T) {
	if err := exec.Command(refPython, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is not available (%v); TestRoundTrip covers the codec alone", refPython, err)
	}
	dir := t.TempDir()
	var kinds []string
	for _, dt := range dtypes {
		kinds = append(kinds, kindOf(t, dt))
	}
	script := `
import sys, numpy as np
d = sys.argv[1]
for kind in sys.argv[2:]:
    for order in "<>":
        a = (np.arange(6) - 2).astype(order + kind).reshape(2, 3)
        np.save("%s/%s%s.npy" % (d, "le" if order == "<" else "be", kind), a)
    np.save("%s/scalar%s.npy" % (d, kind), np.array(1, dtype="<" + kind))
    np.save("%s/vector%s.npy" % (d, kind), np.ones(5, dtype="<" + kind))
`
	if out, err := exec.Command(refPython, append([]string{"-c", script, dir}, kinds...)...).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	for i, dt := range dtypes {
		for _, order := range []string{"le", "be"} {
			data, err := os.ReadFile(filepath.Join(dir, order+kinds[i]+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(data)
			if err != nil {
				t.Errorf("%s %s: %v", order, dt, err)
				continue
			}
			if want := fixture(dt); !nd.Equal(got, want) || got.DType() != dt {
				t.Errorf("%s %s: decoded %v (%s), want %v", order, dt, got, got.DType(), want)
			}
			if order == "le" {
				enc, err := Encode(fixture(dt))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(enc, data) {
					t.Errorf("%s: Encode gives\n%q\nnumpy.save gives\n%q", dt, enc, data)
				}
			}
		}
		for _, name := range []string{"scalar", "vector"} {
			data, err := os.ReadFile(filepath.Join(dir, name+kinds[i]+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := Decode(data)
			if err != nil {
				t.Fatalf("%s %s: %v", name, dt, err)
			}
			enc, err := Encode(a)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, data) {
				t.Errorf("%s %s: Encode gives\n%q\nnumpy.save gives\n%q", name, dt, enc, data)
			}
		}
	}
}

// Both byte orders round-trip every dtype, and the descr names the order.
func TestRoundTrip(t *testing.T) {
	for _, dt := range dtypes {
		for _, order := range []Order{binary.LittleEndian, binary.BigEndian} {
			a := fixture(dt)
			b, err := AppendData(nil, a, order)
			if err != nil {
				t.Fatal(err)
			}
			descr, err := Descr(dt, order)
			if err != nil {
				t.Fatal(err)
			}
			gotDT, gotOrder, err := ParseDescr(descr)
			if err != nil || gotDT != dt {
				t.Fatalf("ParseDescr(%q) = %s, %v", descr, gotDT, err)
			}
			back, err := DecodeData(gotDT, a.Shape, b, gotOrder)
			if err != nil || !nd.Equal(back, a) {
				t.Errorf("%s %s: %v, %v", dt, descr, back, err)
			}
		}
	}
}

// Bad bytes get an error that says what was expected, never a panic.
func TestRefusals(t *testing.T) {
	good, _ := Encode(fixture(nd.Float32))
	for name, b := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("\x93NUMPX\x01\x00\x10\x00"),
		"version":   append([]byte("\x93NUMPY\x09\x00"), good[8:]...),
		"truncated": good[:40],
		"short":     good[:len(good)-4],
		"long":      append(append([]byte{}, good...), 0),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := DecodeData(nd.Float64, []int{1 << 40, 1 << 40}, make([]byte, 8), binary.LittleEndian); err == nil {
		t.Error("an overflowing shape was decoded")
	}
	if _, _, err := ParseDescr("<c8"); err == nil {
		t.Error("complex64 was accepted")
	}
	if _, err := Descr(nd.Object, binary.LittleEndian); err == nil {
		t.Error("an object dtype got a descr")
	}
}
