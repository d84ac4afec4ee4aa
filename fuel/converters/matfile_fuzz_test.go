package converters

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzMatConverters builds MAT-files from fuzzed parameters (a variable's
// class, storage type, dimensions, number of values, compression), then
// overwrites some of their bytes with fuzzed ones, and runs loadMat and
// the two converters that read MAT-files (caltech101_silhouettes, SVHN
// format 2) on them. Every input must give an error or a well-formed
// result: no panic, and every matrix holds exactly the elements its
// dimensions say.
func FuzzMatConverters(f *testing.F) {
	f.Add(false, byte(6), byte(0), []byte{2, 0, 1, 0}, uint16(512), false, uint16(0), []byte{})
	f.Add(true, byte(9), byte(0), []byte{32, 0, 32, 0, 3, 0, 2, 0}, uint16(6144), true, uint16(0), []byte{})
	f.Add(false, byte(6), byte(1), []byte{2, 0, 1, 0}, uint16(512), true, uint16(200), []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(true, byte(9), byte(2), []byte{0, 0, 1, 0, 1, 0, 1, 0}, uint16(0), false, uint16(160), []byte{0, 0, 1, 0, 0, 0, 1, 0})
	// One directory for every input of a worker (a new one each time cost
	// more than the rest).
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, svhn bool, class, stored byte, dimBytes []byte, nvals uint16, compress bool, at uint16, patch []byte) {
		if len(dimBytes) > 16 || nvals > 8192 || len(patch) > 64 {
			return
		}
		var dims []int
		for i := 0; i+1 < len(dimBytes); i += 2 {
			dims = append(dims, int(dimBytes[i])|int(dimBytes[i+1])<<8)
		}
		st := []uint32{miUINT8, miDOUBLE, miINT16}[int(stored)%3]
		vals := make([]float64, nvals)
		for i := range vals {
			vals[i] = float64(i % 251)
		}
		v := matVar{"train_data", class % 16, st, dims, vals}
		var paths []string
		if svhn {
			v.name = "X"
			for _, split := range []string{"train", "test", "extra"} {
				p := filepath.Join(dir, split+"_32x32.mat")
				n := 1
				if len(dims) == 4 {
					n = dims[3]
				}
				ys := make([]float64, min(n, 1024))
				writeMat(t, p, compress, v, matVar{"y", 9, miUINT8, []int{len(ys), 1}, ys})
				paths = append(paths, p)
			}
		} else {
			vars := []matVar{v, {"train_labels", 6, miDOUBLE, []int{2, 1}, []float64{1, 2}}}
			for _, s := range []string{"val", "test"} {
				vars = append(vars, matVar{s + "_data", 6, miUINT8, []int{1, 256}, make([]float64, 256)},
					matVar{s + "_labels", 6, miDOUBLE, []int{1, 1}, []float64{3}})
			}
			p := filepath.Join(dir, "caltech101_silhouettes_16_split1.mat")
			writeMat(t, p, compress, vars...)
			paths = append(paths, p)
		}
		// The fuzzed bytes overwrite the first file at a fuzzed offset.
		b, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(patch) > 0 {
			off := int(at) % len(b)
			b = append(b[:off:off], append(patch, b[min(off+len(patch), len(b)):]...)...)
			if err := os.WriteFile(paths[0], b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		vars, err := loadMat(paths[0])
		if err != nil {
			return // the converters would stop at the same error
		}
		{
			for name, m := range vars {
				n := 1
				for _, d := range m.dims {
					n *= d
				}
				if m.data.Size() != n {
					t.Fatalf("%s: dimensions %v (%d elements) but %d elements", name, m.dims, n, m.data.Size())
				}
			}
		}
		opts := Options{Directory: dir, OutputDirectory: filepath.Join(dir, "out"), Size: 16}
		if err := os.MkdirAll(opts.OutputDirectory, 0o755); err != nil {
			t.Fatal(err)
		}
		name := "caltech101_silhouettes"
		if svhn {
			name, opts.Format = "svhn", 2
		}
		if out, err := Convert(name, opts); err == nil {
			os.Remove(out)
		}
	})
}
