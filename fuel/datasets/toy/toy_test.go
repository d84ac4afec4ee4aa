package toy

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/nd"
)

// pyToy runs Fuel's Spiral and SwissRoll formulas (copied from
// fuel/datasets/toy.py's arithmetic, not its code) with Debian's numpy
// and prints every value: float32 as their bit patterns.
const pyToy = `
import json, sys
import numpy
def spiral(num_examples, classes, cycles, noise, seed):
    rng = numpy.random.RandomState(seed)
    pos = rng.uniform(size=num_examples, low=0, high=cycles)
    label = rng.randint(size=num_examples, low=0, high=classes)
    radius = (2 * pos + 1) / 3.
    phase_offset = label * (2*numpy.pi) / classes
    features = numpy.zeros(shape=(num_examples, 2), dtype='float32')
    features[:, 0] = radius * numpy.sin(2*numpy.pi*pos + phase_offset)
    features[:, 1] = radius * numpy.cos(2*numpy.pi*pos + phase_offset)
    features += noise * rng.normal(size=(num_examples, 2))
    return {'features': features.view('uint32').ravel().tolist(), 'position': pos.tolist(), 'label': label.tolist()}
def swissroll(num_examples, noise, seed):
    cycles = 1.5
    rng = numpy.random.RandomState(seed)
    pos = rng.uniform(size=num_examples, low=0, high=1)
    phi = cycles * numpy.pi * (1 + 2*pos)
    radius = (1 + 2 * pos) / 3
    x = radius * numpy.cos(phi)
    y = radius * numpy.sin(phi)
    z = rng.uniform(size=num_examples, low=-1, high=1)
    features = numpy.zeros(shape=(num_examples, 3), dtype='float32')
    features[:, 0] = x
    features[:, 1] = y
    features[:, 2] = z
    features += noise * rng.normal(size=(num_examples, 3))
    position = numpy.zeros(shape=(num_examples, 2), dtype='float32')
    position[:, 0] = pos
    position[:, 1] = z
    return {'features': features.view('uint32').ravel().tolist(), 'position': position.view('uint32').ravel().tolist()}
json.dump({'spiral': [spiral(1000, 1, 1., 0.0, 1), spiral(500, 3, 2.5, 0.1, 7)],
           'swissroll': [swissroll(1000, 0.0, 1), swissroll(300, 0.05, 1234)]}, sys.stdout)
`

type pyResult struct {
	Spiral []struct {
		Features []uint32
		Position []float64
		Label    []int64
	}
	SwissRoll []struct {
		Features []uint32
		Position []uint32
	} `json:"swissroll"`
}

func numpyReference(t *testing.T) pyResult {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is needed (apt-get install python3-numpy): %v", py, err)
	}
	out, err := exec.Command(py, "-c", pyToy).Output()
	if err != nil {
		t.Fatal(err)
	}
	var r pyResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func all(t *testing.T, d *datasets.IndexableDataset) []*nd.Array {
	t.Helper()
	out, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFloat32 compares float32 values with numpy's bit patterns.
func sameFloat32(t *testing.T, what string, got []float32, want []uint32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, numpy %d", what, len(got), len(want))
	}
	bad := 0
	for i, v := range got {
		if math.Float32bits(v) != want[i] {
			if bad < 3 {
				t.Errorf("%s[%d] = %v, numpy %v", what, i, v, math.Float32frombits(want[i]))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ from numpy", what, bad, len(got))
	}
}

func TestToyMatchesNumpy(t *testing.T) {
	t.Setenv("FUEL_CONFIG", filepath.Join(t.TempDir(), "none"))
	ref := numpyReference(t)
	seven := 7
	for k, o := range []SpiralOptions{DefaultSpiral(), {NumExamples: 500, Classes: 3, Cycles: 2.5, Noise: 0.1, Seed: &seven}} {
		d, err := Spiral(o)
		if err != nil {
			t.Fatal(err)
		}
		out := all(t, d)
		want := ref.Spiral[k]
		sameFloat32(t, "Spiral features", out[0].F32(), want.Features)
		for i, v := range out[1].F64() {
			if v != want.Position[i] {
				t.Fatalf("Spiral %d position[%d] = %v, numpy %v", k, i, v, want.Position[i])
			}
		}
		for i, v := range out[2].I64() {
			if v != want.Label[i] {
				t.Fatalf("Spiral %d label[%d] = %d, numpy %d", k, i, v, want.Label[i])
			}
		}
	}
	seed := 1234
	for k, o := range []SwissRollOptions{DefaultSwissRoll(), {NumExamples: 300, Noise: 0.05, Seed: &seed}} {
		d, err := SwissRoll(o)
		if err != nil {
			t.Fatal(err)
		}
		out := all(t, d)
		sameFloat32(t, "SwissRoll features", out[0].F32(), ref.SwissRoll[k].Features)
		sameFloat32(t, "SwissRoll position", out[1].F32(), ref.SwissRoll[k].Position)
	}
}

func TestToyDefaults(t *testing.T) {
	t.Setenv("FUEL_CONFIG", filepath.Join(t.TempDir(), "none"))
	d, err := Spiral(DefaultSpiral())
	if err != nil {
		t.Fatal(err)
	}
	if d.NumExamples() != 1000 || len(d.Sources()) != 3 || d.Sources()[2] != "label" {
		t.Errorf("Spiral: %d examples, sources %v", d.NumExamples(), d.Sources())
	}
	if _, err := Spiral(SpiralOptions{NumExamples: 3}); err == nil {
		t.Error("classes=0 accepted")
	}
	neg := -1
	if _, err := SwissRoll(SwissRollOptions{NumExamples: 3, Seed: &neg}); err == nil {
		t.Error("a negative seed accepted")
	}
}
