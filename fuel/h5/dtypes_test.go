//go:build cgo

package h5

import (
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// TestEveryNumericDTypeMatchesH5py enumerates nd's numeric dtypes: each is
// written here and read by h5py with numpy's dtype and values, and a
// dataset h5py writes with that dtype (int8 as Fuel's text converters
// write it, int16, uint16, ...) reads back here with the same dtype and
// values. A dtype added to nd without HDF5 support fails here.
func TestEveryNumericDTypeMatchesH5py(t *testing.T) {
	pythonH5py(t)
	path := filepath.Join(t.TempDir(), "dtypes.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	dts := nd.NumericDTypes()
	var names []string
	for _, dt := range dts {
		a := nd.New(dt, 3, 2)
		for i := range 6 {
			a.SetFlat(i, float64(i*3%5)) // non-negative: every dtype holds it
		}
		if err := w.AddSource(dt.String(), a, []string{"batch", "feature"}); err != nil {
			t.Fatalf("writing a %s source: %v", dt, err)
		}
		names = append(names, dt.String())
	}
	if err := w.AddSplit(SplitDef{Name: "all", Start: 0, Stop: 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// h5py reads each source, then replaces it by one it writes itself
	// with the same dtype and new values (7 * (arange(6) - 2) for signed types,
	// so negative values cross).
	var got map[string]struct {
		DType  string
		Values []float64
	}
	pyH5(t, `
import sys, json, h5py, numpy
out = {}
with h5py.File(sys.argv[1], "r+") as f:
    for n in sys.argv[2:]:
        d = f[n]
        out[n] = {"DType": str(d.dtype), "Values": [float(v) for v in d[...].ravel()]}
        dt = d.dtype
        del f[n]
        v = numpy.arange(6) - (2 if dt.kind in "if" else 0)
        f.create_dataset(n, data=(v * 7).astype(dt).reshape(3, 2) if dt.kind != "b" else (v % 2 == 1).reshape(3, 2))
print(json.dumps(out))
`, &got, append([]string{path}, names...)...)
	for _, dt := range dts {
		g, ok := got[dt.String()]
		want := []float64{0, 3, 1, 4, 2, 0}
		if dt == nd.Bool {
			want = []float64{0, 1, 1, 1, 1, 0}
		}
		if !ok || g.DType != dt.String() || !equalFloats(g.Values, want) {
			t.Errorf("%s source written here: h5py reads %+v, want dtype %s values %v", dt, g, dt, want)
		}
		a := readWhole(t, path, dt.String())
		v := []float64{-2, -1, 0, 1, 2, 3}
		if !dt.IsFloat() && dt != nd.Int8 && dt != nd.Int16 && dt != nd.Int32 && dt != nd.Int64 {
			v = []float64{0, 1, 2, 3, 4, 5}
		}
		for i := range v {
			v[i] *= 7
			if dt == nd.Bool {
				v[i] = float64(i % 2)
			}
		}
		if a.DType() != dt || !nd.SameShape(a.Shape, []int{3, 2}) || !equalFloats(a.Float64s(), v) {
			t.Errorf("%s dataset written by h5py reads here as %s%v %v, want %s[3 2] %v", dt, a.DType(), a.Shape, a.Float64s(), dt, v)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
