package converters

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// matVar is a numeric variable for writeMat: values in column-major order.
type matVar struct {
	name   string
	class  byte   // mx class
	stored uint32 // mi storage type
	dims   []int
	values []float64
}

// writeMat writes a little-endian level 5 MAT-file as MATLAB's "MAT-File
// Format" describes it (and scipy.io.loadmat reads it), each variable in a
// compressed element when compress is set.
func writeMat(t *testing.T, path string, compress bool, vars ...matVar) {
	t.Helper()
	le := binary.LittleEndian
	elem := func(typ uint32, data []byte) []byte {
		var b []byte
		b = le.AppendUint32(b, typ)
		b = le.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
		return b
	}
	var out bytes.Buffer
	head := make([]byte, 128)
	copy(head, "MATLAB 5.0 MAT-file, written by the fuel/converters test")
	for i := 116; i < 124; i++ {
		head[i] = ' '
	}
	le.PutUint16(head[124:], 0x0100)
	copy(head[126:], "IM")
	out.Write(head)
	for _, v := range vars {
		var flags, dims, data []byte
		flags = le.AppendUint32(flags, uint32(v.class))
		flags = le.AppendUint32(flags, 0)
		for _, d := range v.dims {
			dims = le.AppendUint32(dims, uint32(d))
		}
		for _, x := range v.values {
			switch v.stored {
			case miUINT8:
				data = append(data, byte(x))
			case miDOUBLE:
				data = le.AppendUint64(data, math.Float64bits(x))
			case miINT16:
				data = le.AppendUint16(data, uint16(int16(x)))
			case miINT8:
				data = append(data, byte(int8(x)))
			}
		}
		body := append(append(append(elem(miUINT32, flags), elem(miINT32, dims)...), elem(miINT8, []byte(v.name))...), elem(v.stored, data)...)
		m := elem(miMATRIX, body)
		if compress {
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write(m)
			zw.Close()
			var c []byte
			c = le.AppendUint32(c, miCOMPRESSED)
			c = le.AppendUint32(c, uint32(z.Len()))
			m = append(c, z.Bytes()...)
		}
		out.Write(m)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConvertSVHNFormat2(t *testing.T) {
	dir := t.TempDir()
	// X[r, k, c, n] = (r + 3k + 7c + 11n) % 256 (logical indices), y = n % 11.
	pix := func(r, k, c, n int) float64 { return float64((r + 3*k + 7*c + 11*n) % 256) }
	sizes := map[string]int{"train": 3, "test": 2, "extra": 4}
	for i, split := range []string{"train", "test", "extra"} {
		n := sizes[split]
		var xs, ys []float64
		// Column-major: r fastest, then k, then c, then n.
		for e := 0; e < n; e++ {
			for c := 0; c < 3; c++ {
				for k := 0; k < 32; k++ {
					for r := 0; r < 32; r++ {
						xs = append(xs, pix(r, k, c, e+10*i))
					}
				}
			}
		}
		for e := 0; e < n; e++ {
			ys = append(ys, float64((e+i)%11))
		}
		writeMat(t, filepath.Join(dir, split+"_32x32.mat"), i != 1,
			matVar{"X", 9, miUINT8, []int{32, 32, 3, n}, xs},
			matVar{"y", 9, miUINT8, []int{n, 1}, ys})
	}
	path, err := Convert("svhn", Options{Directory: dir, OutputDirectory: dir, Format: 2})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "svhn_format_2.hdf5" {
		t.Errorf("output %s", path)
	}
	for i, split := range []string{"train", "test", "extra"} {
		d, out := readAll(t, path, split)
		d.Close()
		f, y := out[0], out[1]
		if !equalInts(f.Shape, []int{sizes[split], 3, 32, 32}) || !equalInts(y.Shape, []int{sizes[split], 1}) {
			t.Fatalf("%s: %v %v", split, f.Shape, y.Shape)
		}
		for e := 0; e < sizes[split]; e++ {
			for _, rkc := range [][3]int{{0, 0, 0}, {5, 17, 2}, {31, 30, 1}} {
				r, k, c := rkc[0], rkc[1], rkc[2]
				off := ((e*3+c)*32+r)*32 + k
				if got, want := f.Flat(off), pix(r, k, c, e+10*i); got != want {
					t.Errorf("%s: features[%d, %d, %d, %d] = %v, want %v", split, e, c, r, k, got, want)
				}
			}
			want := float64((e + i) % 11)
			if want == 10 {
				want = 0
			}
			if y.Flat(e) != want {
				t.Errorf("%s: targets[%d] = %v, want %v", split, e, y.Flat(e), want)
			}
		}
	}
	if _, err := Convert("svhn", Options{Directory: dir, OutputDirectory: dir, Format: 1}); err == nil {
		t.Error("format 1 converted")
	}
}

func TestConvertSilhouettes(t *testing.T) {
	dir := t.TempDir()
	var vars []matVar
	for i, s := range []string{"train", "val", "test"} {
		n := i + 2
		var xs, ys []float64
		// data (N, 256) column-major: element (e, j) at e + n*j.
		for j := 0; j < 256; j++ {
			for e := 0; e < n; e++ {
				xs = append(xs, float64((e*7+j+i)%2))
			}
		}
		for e := 0; e < n; e++ {
			ys = append(ys, float64(e+1+i))
		}
		vars = append(vars, matVar{s + "_data", 6, miUINT8, []int{n, 256}, xs}, matVar{s + "_labels", 6, miDOUBLE, []int{n, 1}, ys})
	}
	writeMat(t, filepath.Join(dir, "caltech101_silhouettes_16_split1.mat"), false, vars...)
	path, err := Convert("caltech101_silhouettes", Options{Directory: dir, OutputDirectory: dir, Size: 16})
	if err != nil {
		t.Fatal(err)
	}
	d, out := readAll(t, path, "valid")
	d.Close()
	f, y := out[0], out[1]
	// The class is double, so scipy (and Fuel's file) have float64.
	if f.DType().String() != "float64" || !equalInts(f.Shape, []int{3, 1, 16, 16}) || y.Flat(2) != 4 {
		t.Fatalf("valid: %s%v, targets %v", f.DType(), f.Shape, y)
	}
	for e := 0; e < 3; e++ {
		for j := 0; j < 256; j++ {
			if got, want := f.Flat(e*256+j), float64((e*7+j+1)%2); got != want {
				t.Fatalf("features[%d][%d] = %v, want %v", e, j, got, want)
			}
		}
	}
	if filepath.Base(path) != "caltech101_silhouettes16.hdf5" {
		t.Errorf("output %s", path)
	}
}
