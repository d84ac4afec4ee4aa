package converters

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// TestResizeLanczosMatchesPIL compares celeba 64's resize and crop with
// PIL's Image.resize((64, 78), Image.ANTIALIAS).crop((0, 7, 64, 71)) on a
// random 218x178 RGB image (Debian's python3-pil as the reference).
func TestResizeLanczosMatchesPIL(t *testing.T) {
	raw, err := exec.Command("/usr/bin/python3", "-c", `
import json, numpy
from PIL import Image
im = numpy.random.RandomState(3).randint(0, 256, (218, 178, 3)).astype('uint8')
out = numpy.asarray(Image.fromarray(im).resize((64, 78), Image.LANCZOS).crop((0, 7, 64, 71))).transpose(2, 0, 1)
print(json.dumps({'in': im.transpose(2, 0, 1).ravel().tolist(), 'out': out.ravel().tolist()}))
`).Output()
	if err != nil {
		t.Skipf("Debian's python3-pil is the reference: %v", err)
	}
	var ref struct{ In, Out []uint8 }
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	got := cropRows(resizeLanczos(nd.FromSlice(ref.In, 3, 218, 178), 78, 64), 7, 64)
	g := got.Data.([]uint8)
	if len(g) != len(ref.Out) {
		t.Fatalf("%d pixels, PIL %d", len(g), len(ref.Out))
	}
	diff := 0
	for i := range g {
		if g[i] != ref.Out[i] {
			diff++
			if diff < 5 {
				t.Errorf("pixel %d: %d, PIL %d", i, g[i], ref.Out[i])
			}
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d pixels differ from PIL's", diff, len(g))
	}
}

// writeCelebA writes n images of a grey level (i*20) and their attributes.
func writeCelebA(t *testing.T, dir string, n, h, w int, attrs string) {
	t.Helper()
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("img_align_celeba/%06d.jpg", i))
	}
	writeZip(t, filepath.Join(dir, celebAImages), append([]string{"img_align_celeba/"}, names...), func(name string) []byte {
		var i int
		fmt.Sscanf(filepath.Base(name), "%06d.jpg", &i)
		return grayJPEG(t, w, h, uint8(i*20))
	})
	if attrs == "" {
		var b strings.Builder
		b.WriteString(fmt.Sprint(n) + "\nnames of the 40 attributes")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "\n%06d.jpg", i)
			for k := 0; k < 40; k++ {
				b.WriteString([]string{"  1", " -1"}[(i+k)%2])
			}
		}
		attrs = b.String() + "\n"
	}
	os.WriteFile(filepath.Join(dir, celebAAttributes), []byte(attrs), 0o644)
}

func TestConvertCelebA(t *testing.T) {
	dir := t.TempDir()
	writeCelebA(t, dir, 3, 218, 178, "")
	for _, format := range []string{"aligned_cropped", "64"} {
		out, err := Convert("celeba", Options{Directory: dir, OutputDirectory: dir, WhichFormat: format})
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(out) != "celeba_"+format+".hdf5" {
			t.Errorf("wrote %s", out)
		}
		d, err := h5.Open(out, []string{"train"}, h5.Options{LoadInMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		data, err := d.GetData(fuel.Request{Start: 0, Stop: 3})
		if err != nil {
			t.Fatal(err)
		}
		feats, targs := data[0], data[1]
		if d.Sources()[0] != "features" {
			feats, targs = targs, feats
		}
		want := []int{3, 3, 218, 178}
		if format == "64" {
			want = []int{3, 3, 64, 64}
		}
		if fmt.Sprint(feats.Shape) != fmt.Sprint(want) || fmt.Sprint(targs.Shape) != "[3 40]" {
			t.Errorf("%s: features %v, targets %v", format, feats.Shape, targs.Shape)
		}
		for i := 0; i < 3; i++ {
			// A flat grey image stays flat through the resize.
			if v := feats.Flat(i * feats.Size() / 3); v < float64((i+1)*20-2) || v > float64((i+1)*20+2) {
				t.Errorf("%s: image %d: pixel %v, want about %d", format, i, v, (i+1)*20)
			}
			for k := 0; k < 40; k++ {
				if got, want := targs.Flat(i*40+k), float64(1-(i+1+k)%2); got != want {
					t.Fatalf("%s: target (%d, %d) = %v, want %v", format, i, k, got, want)
				}
			}
		}
	}
}

// TestConvertCelebABadInput: a wrong format, a corrupt archive, a missing
// image, an image of the wrong size and a bad attribute give errors that
// say what is wrong, and leave no output file.
func TestConvertCelebABadInput(t *testing.T) {
	for _, c := range []struct {
		name, format string
		setup        func(dir string)
		want         string
	}{
		{"format", "a", func(dir string) { writeCelebA(t, dir, 1, 218, 178, "") }, "'aligned_cropped' or '64'"},
		{"corrupt zip", "64", func(dir string) {
			writeCelebA(t, dir, 1, 218, 178, "")
			os.WriteFile(filepath.Join(dir, celebAImages), []byte("PK\x05\x06 truncated"), 0o644)
		}, celebAImages},
		{"missing image", "64", func(dir string) {
			writeCelebA(t, dir, 1, 218, 178, "a\nb\n000001.jpg"+strings.Repeat(" 1", 40)+"\n000002.jpg"+strings.Repeat(" 1", 40)+"\n")
		}, "no member img_align_celeba/000002.jpg"},
		{"image size", "aligned_cropped", func(dir string) { writeCelebA(t, dir, 1, 20, 10, "") }, "want 218x178"},
		{"attribute", "64", func(dir string) {
			writeCelebA(t, dir, 1, 218, 178, "a\nb\n000001.jpg"+strings.Repeat(" 1", 39)+" 2\n")
		}, "not -1 or 1"},
		{"short record", "64", func(dir string) { writeCelebA(t, dir, 1, 218, 178, "a\nb\n000001.jpg 1 1\n") }, "40 attributes"},
		{"missing file", "64", func(dir string) {}, "img_align_celeba.zip, list_attr_celeba.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(dir)
			_, err := Convert("celeba", Options{Directory: dir, OutputDirectory: dir, WhichFormat: c.format})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "*.hdf5"))
			if len(matches) > 0 {
				t.Errorf("a failed conversion left %v", matches)
			}
		})
	}
}

// TestConvertAdult converts two small files and checks the encoding
// against a direct computation: continuous attributes as they are,
// categorical ones one-hot in sorted order, records with '?' dropped,
// the test features padded with a zero column, targets income '>50K'.
func TestConvertAdult(t *testing.T) {
	dir := t.TempDir()
	rec := func(age int, work, country, income string) string {
		return fmt.Sprintf("%d, %s, 100, HS-grad, 9, Divorced, Sales, Husband, White, Male, 0, 0, 40, %s, %s\n", age, work, country, income)
	}
	train := rec(30, "Private", "Peru", "<=50K") + rec(40, "State-gov", "Cuba", ">50K") + rec(50, "?", "Cuba", ">50K") + rec(60, "Private", "Chile", ">50K") + "\n"
	test := "|1x3 Cross validator\n" + rec(20, "State-gov", "Cuba", ">50K.") + rec(21, "Private", "Peru", "<=50K.") + "\n"
	os.WriteFile(filepath.Join(dir, "adult.data"), []byte(train), 0o644)
	os.WriteFile(filepath.Join(dir, "adult.test"), []byte(test), 0o644)
	out, err := Convert("adult", Options{Directory: dir, OutputDirectory: dir})
	if err != nil {
		t.Fatal(err)
	}
	d, err := h5.Open(out, []string{"train", "test"}, h5.Options{LoadInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	data, err := d.GetData(fuel.Request{Start: 0, Stop: 5})
	if err != nil {
		t.Fatal(err)
	}
	x, y := data[0], data[1]
	// age, workclass (2), fnlwgt, education (1), education-num, marital (1),
	// occupation (1), relationship (1), race (1), sex (1), gain, loss,
	// hours, native-country (3 in train: Chile, Cuba, Peru; 2 in test).
	want := [][]float64{
		{30, 1, 0, 100, 1, 9, 1, 1, 1, 1, 1, 0, 0, 40, 0, 0, 1},
		{40, 0, 1, 100, 1, 9, 1, 1, 1, 1, 1, 0, 0, 40, 0, 1, 0},
		{60, 1, 0, 100, 1, 9, 1, 1, 1, 1, 1, 0, 0, 40, 1, 0, 0},
		{20, 0, 1, 100, 1, 9, 1, 1, 1, 1, 1, 0, 0, 40, 1, 0, 0},
		{21, 1, 0, 100, 1, 9, 1, 1, 1, 1, 1, 0, 0, 40, 0, 1, 0},
	}
	if fmt.Sprint(x.Shape) != "[5 17]" || x.DType() != nd.Float64 {
		t.Fatalf("features %s %v, want float64 [5 17]", x.DType(), x.Shape)
	}
	for i, row := range want {
		for j, v := range row {
			if got := x.Flat(i*17 + j); got != v {
				t.Errorf("features (%d, %d) = %v, want %v", i, j, got, v)
			}
		}
	}
	for i, v := range []float64{0, 1, 1, 1, 0} {
		if got := y.Flat(i); got != v {
			t.Errorf("target %d = %v, want %v", i, got, v)
		}
	}
	if y.DType() != nd.Bool {
		t.Errorf("targets are %s, want bool (Fuel's)", y.DType())
	}
}

// TestConvertAdultBadInput: malformed records give errors with the file
// and line, and a missing file names it.
func TestConvertAdultBadInput(t *testing.T) {
	good := "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K\n"
	for _, c := range []struct{ name, train, test, want string }{
		{"fields", "1, 2, 3\n\n", "x\n" + good + "\n", "adult.data: line 1: 3 fields"},
		{"number", strings.Replace(good, "77516", "many", 1) + "\n", "x\n" + good + "\n", "fnlwgt of a record (\"many\") is not a number"},
		{"empty", "", "", "no records"},
		{"widths", good + "\n", "x\n" + strings.Replace(good, "United-States", "Peru", 1) + strings.Replace(good, "Male", "Female", 1) + "\n", "must agree"},
		{"missing", "", "-", "adult.test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "adult.data"), []byte(c.train), 0o644)
			if c.test != "-" {
				os.WriteFile(filepath.Join(dir, "adult.test"), []byte(c.test), 0o644)
			}
			_, err := Convert("adult", Options{Directory: dir, OutputDirectory: dir})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
