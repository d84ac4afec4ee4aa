package converters

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/nd"
)

// mnistDir returns a new directory holding MNIST-shaped idx files
// (fixtures.WriteMNIST: MNIST's names and sizes, its first examples) made
// from the subset shipped in the binary.
func mnistDir(t *testing.T) string {
	t.Helper()
	return fixtures.MNISTDir(t, datasets.EmbeddedMNISTFiles())
}

// fuelSmall returns the path of a copy of mnist-small.hdf5, the file Fuel's
// converter made from MNIST's train[0:1000] and t10k[0:200].
func fuelSmall(t *testing.T) string {
	t.Helper()
	return fixtures.Path(t, "fuel-h5/mnist-small.hdf5")
}

// writeIDX writes an idx file (gzipped when gz) holding the first n
// entries of a.
func writeIDX(t *testing.T, path string, a *nd.Array, n int, gz bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w interface {
		Write([]byte) (int, error)
	} = f
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(f)
		w = zw
	}
	head := []byte{0, 0, 8, byte(a.NDim())}
	shape := append([]int{n}, a.Shape[1:]...)
	for _, d := range shape {
		head = binary.BigEndian.AppendUint32(head, uint32(d))
	}
	w.Write(head)
	w.Write(a.Data.([]uint8)[:n*a.RowSize()])
	if zw != nil {
		zw.Close()
	}
}

// mnistCache holds the MNIST files once read (tests run one at a
// time in this package).
var mnistCache = map[string]*nd.Array{}

// smallMNIST writes the first train and test examples of MNIST as
// idx files, as mnist-small.hdf5 was made (1000 and 200).
func smallMNIST(t *testing.T, gz bool) string {
	dir := t.TempDir()
	for base, n := range map[string]int{"train-images-idx3-ubyte": 1000, "train-labels-idx1-ubyte": 1000, "t10k-images-idx3-ubyte": 200, "t10k-labels-idx1-ubyte": 200} {
		a := mnistCache[base]
		if a == nil {
			f, err := datasets.EmbeddedMNISTFiles().Open(base + ".gz")
			if err != nil {
				t.Fatal(err)
			}
			a, err = datasets.ReadIDXGzipOrPlain(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			mnistCache[base] = a
		}
		name := filepath.Join(dir, base)
		if gz {
			name += ".gz"
		}
		writeIDX(t, name, a, n, gz)
	}
	return dir
}

func readAll(t *testing.T, path, split string) (*h5.H5PYDataset, []*nd.Array) {
	t.Helper()
	d, err := h5.Open(path, []string{split}, h5.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
	if err != nil {
		t.Fatal(err)
	}
	return d, out
}

// sameAsFuel checks that the splits of a converted file hold, for the
// examples Fuel's mnist-small.hdf5 has, the same data, dtypes, shapes and
// labels.
func sameAsFuel(t *testing.T, path string) {
	t.Helper()
	ref := fuelSmall(t)
	for _, split := range []string{"train", "test"} {
		rd, want := readAll(t, ref, split)
		gd, got := readAll(t, path, split)
		if !slices.Equal(rd.Sources(), gd.Sources()) {
			t.Errorf("%s: sources %v, Fuel %v", split, gd.Sources(), rd.Sources())
		}
		rl, gl := rd.AxisLabels(), gd.AxisLabels()
		for i, src := range rd.Sources() {
			if !slices.Equal(rl[src], gl[src]) {
				t.Errorf("%s: labels %q, Fuel %q", src, gl[src], rl[src])
			}
			n := want[i].Shape[0]
			g := got[i].Slice(0, n)
			if !nd.Equal(g, want[i]) {
				t.Errorf("%s/%s: the first %d examples differ from Fuel's (%s%v vs %s%v)", split, src, n, g.DType(), g.Shape, want[i].DType(), want[i].Shape)
			}
		}
		rd.Close()
		gd.Close()
	}
}

func TestConvertMNISTSmallMatchesFuel(t *testing.T) {
	for _, gz := range []bool{true, false} {
		t.Run(fmt.Sprintf("gz=%v", gz), func(t *testing.T) {
			in := smallMNIST(t, gz)
			out := t.TempDir()
			path, err := Convert("mnist", Options{Directory: in, OutputDirectory: out, Command: "fuel-convert mnist"})
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(path) != "mnist.hdf5" {
				t.Errorf("output %s", path)
			}
			sameAsFuel(t, path)
			// The split table is Fuel's, row for row.
			ref, _ := h5.ReadSplit(fuelSmall(t))
			got, _ := h5.ReadSplit(path)
			if fmt.Sprint(ref) != fmt.Sprint(got) {
				t.Errorf("split table\n %v\nFuel's\n %v", got, ref)
			}
			info, err := h5.Describe(path)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"h5py_interface_version": "0.3", "fuel_convert_version": "0.2", "fuel_convert_command": "fuel-convert mnist"}
			if fmt.Sprint(info.Attributes) != fmt.Sprint(want) {
				t.Errorf("attributes %v, want %v", info.Attributes, want)
			}
		})
	}
}

// TestConvertMNISTFull converts full-sized MNIST files (70,000 examples,
// MNIST-shaped from the embedded subset) and checks the examples Fuel's
// mnist-small.hdf5 holds.
func TestConvertMNISTFull(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	in := mnistDir(t)
	path, err := Convert("mnist", Options{Directory: in, OutputDirectory: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sameAsFuel(t, path)
	s, _ := h5.ReadSplit(path)
	if r, _ := s.Row("test", "features"); r.Start != 60000 || r.Stop != 70000 {
		t.Errorf("test split %+v, want [60000, 70000)", r)
	}
}

func TestConvertMNISTDType(t *testing.T) {
	in := smallMNIST(t, true)
	for _, dt := range []string{"float32", "bool"} {
		path, err := Convert("mnist", Options{Directory: in, OutputDirectory: t.TempDir(), DType: dt})
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(path) != "mnist_"+dt+".hdf5" {
			t.Errorf("output %s", path)
		}
		d, out := readAll(t, path, "train")
		d.Close()
		if out[0].DType().String() != dt || out[1].DType() != nd.Uint8 {
			t.Errorf("%s: features %s, targets %s", dt, out[0].DType(), out[1].DType())
		}
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Convert("mnist", Options{Directory: dir, OutputDirectory: dir})
	var missing *MissingInputFilesError
	if !errors.As(err, &missing) || len(missing.Files) != 4 || !strings.Contains(err.Error(), "train-images-idx3-ubyte") {
		t.Errorf("missing files: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Errorf("files left after a failed conversion: %v", m)
	}
	if _, err := Convert("youtube_audio", Options{Directory: dir, OutputDirectory: dir}); !errors.Is(err, ErrNotImplemented) {
		t.Errorf("youtube_audio: %v", err)
	}
	// Fuel's check_exists(required_files=ALL_FILES) of the ILSVRC converters.
	for dataset, files := range map[string]int{"ilsvrc2010": 6, "ilsvrc2012": 4} {
		_, err := Convert(dataset, Options{Directory: dir, OutputDirectory: dir})
		if !errors.As(err, &missing) || len(missing.Files) != files {
			t.Errorf("%s: %v", dataset, err)
		}
	}
	if _, err := Convert("nope", Options{}); err == nil || !strings.Contains(err.Error(), "unknown dataset") {
		t.Errorf("unknown: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "iris.data"), []byte("5.1,3.5,1.4,0.2,Iris-setosa\n1,2,3,4,Iris-nope\n"), 0o644)
	if _, err := Convert("iris", Options{Directory: dir, OutputDirectory: dir}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad iris: %v", err)
	}
}

func TestConvertIrisAndBinarizedMNIST(t *testing.T) {
	dir := t.TempDir()
	iris := "5.1,3.5,1.4,0.2,Iris-setosa\n7.0,3.2,4.7,1.4,Iris-versicolor\n6.3,3.3,6.0,2.5,Iris-virginica\n\n"
	os.WriteFile(filepath.Join(dir, "iris.data"), []byte(iris), 0o644)
	path, err := Convert("iris", Options{Directory: dir, OutputDirectory: dir})
	if err != nil {
		t.Fatal(err)
	}
	d, out := readAll(t, path, "all")
	d.Close()
	if out[0].DType() != nd.Float32 || !slices.Equal(out[0].Shape, []int{3, 4}) || out[0].F32()[4] != 7.0 ||
		!slices.Equal(out[1].Data.([]uint8), []uint8{0, 1, 2}) || !slices.Equal(d.AxisLabels()["features"], []string{"batch", "feature"}) {
		t.Errorf("iris: %v %v %v", out[0], out[1], d.AxisLabels())
	}

	for k, split := range []string{"train", "valid", "test"} {
		var b strings.Builder
		for r := 0; r < k+1; r++ {
			for j := 0; j < 784; j++ {
				fmt.Fprintf(&b, "%d ", (j+r+k)%2)
			}
			b.WriteString("\n")
		}
		os.WriteFile(filepath.Join(dir, "binarized_mnist_"+split+".amat"), []byte(b.String()), 0o644)
	}
	path, err = Convert("binarized_mnist", Options{Directory: dir, OutputDirectory: dir})
	if err != nil {
		t.Fatal(err)
	}
	d, out = readAll(t, path, "test")
	d.Close()
	if out[0].DType() != nd.Uint8 || !slices.Equal(out[0].Shape, []int{3, 1, 28, 28}) || out[0].Data.([]uint8)[784] != 1 {
		t.Errorf("binarized: %s%v", out[0].DType(), out[0].Shape)
	}
	s, _ := h5.ReadSplit(path)
	if r, _ := s.Row("test", "features"); r.Start != 3 || r.Stop != 6 {
		t.Errorf("test split %+v, want [3, 6)", r)
	}
}
