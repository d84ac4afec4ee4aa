package toy

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// Fuel's Spiral formula run by Debian's numpy is the reference.
const spiralPy = `
import json, numpy
rng = numpy.random.RandomState(3)
n, classes, cycles, noise = 50, 3, 1.5, 0.05
pos = rng.uniform(size=n, low=0, high=cycles)
label = rng.randint(size=n, low=0, high=classes)
radius = (2 * pos + 1) / 3.
phase_offset = label * (2 * numpy.pi) / classes
features = numpy.zeros(shape=(n, 2), dtype='float32')
features[:, 0] = radius * numpy.sin(2 * numpy.pi * pos + phase_offset)
features[:, 1] = radius * numpy.cos(2 * numpy.pi * pos + phase_offset)
features += noise * rng.normal(size=(n, 2))
print(json.dumps({"f": [float(v) for v in features.ravel()], "p": pos.tolist(), "l": label.tolist()}))
`

func TestSpiralMatchesNumpy(t *testing.T) {
	out, err := exec.Command("/usr/bin/python3", "-c", spiralPy).Output()
	if err != nil {
		t.Skipf("Debian's python3 with numpy is not available: %v", err)
	}
	var ref struct {
		F, P []float64
		L    []int64
	}
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	f, p, l, err := SpiralData(SpiralOptions{NumExamples: 50, Classes: 3, Cycles: 1.5, Noise: 0.05, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range f.F32() {
		if float64(v) != ref.F[i] {
			t.Fatalf("features[%d] = %v, numpy %v", i, v, ref.F[i])
		}
	}
	for i, v := range p.F64() {
		if v != ref.P[i] {
			t.Fatalf("position[%d] = %v, numpy %v", i, v, ref.P[i])
		}
	}
	for i, v := range l.I64() {
		if v != ref.L[i] {
			t.Fatalf("label[%d] = %v, numpy %v", i, v, ref.L[i])
		}
	}
	ds, err := NewSpiral(SpiralOptions{NumExamples: 50, Classes: 3, Cycles: 1, Seed: 1})
	if err != nil || ds.NumExamples() != 50 {
		t.Fatalf("NewSpiral: %v", err)
	}
}
