package converters

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/h5"
)

// pyDigitStruct writes a digitStruct.mat as MATLAB 7.3 lays SVHN's out
// (with Debian's h5py): image 1 has three boxes whose values are object
// references to 1x1 float64 datasets, image 2 one box stored in place;
// bbox holds references to the images' groups.
const pyDigitStruct = `
import sys, h5py, numpy
f = h5py.File(sys.argv[1], 'w')
ref = h5py.special_dtype(ref=h5py.Reference)
boxes = {'label': [10., 2., 3.], 'height': [30., 31., 32.], 'width': [7., 8., 9.], 'left': [-2., 40., 50.], 'top': [5., 6., 7.]}
g1 = f.create_group('digitStruct/image_1')
for name, vals in boxes.items():
    refs = []
    for k, v in enumerate(vals):
        d = f.create_dataset('#refs#/%s%d' % (name, k), data=numpy.array([[v]]))
        refs.append([d.ref])
    g1.create_dataset(name, (3, 1), dtype=ref)[...] = refs
g2 = f.create_group('digitStruct/image_2')
for name in boxes:
    g2[name] = numpy.array([[4.]])
bbox = f.create_dataset('digitStruct/bbox', (2, 1), dtype=ref)
bbox[...] = [[g1.ref], [g2.ref]]
f.close()
`

func pngBytes(t *testing.T, w, h int) []byte {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range im.Pix {
		im.Pix[i] = uint8(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, im); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeTarGz writes a gzipped tar of the given members, in order.
func writeTarGz(t *testing.T, path string, members [][2]any) {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		data := m[1].([]byte)
		if err := tw.WriteHeader(&tar.Header{Name: m[0].(string), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConvertSVHNFormat1MatlabLayout converts archives whose
// digitStruct.mat has MATLAB's layout (references for several boxes),
// and checks the boxes (label 10 as 0, a negative left as 0) and images.
func TestConvertSVHNFormat1MatlabLayout(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "digitStruct.mat")
	if out, err := exec.Command("/usr/bin/python3", "-c", pyDigitStruct, ds).CombinedOutput(); err != nil {
		t.Skipf("Debian's python3-h5py writes the file: %v\n%s", err, out)
	}
	mat, err := os.ReadFile(ds)
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []string{"train", "test", "extra"} {
		writeTarGz(t, filepath.Join(dir, split+".tar.gz"), [][2]any{
			{split + "/1.png", pngBytes(t, 4, 3)}, {split + "/2.png", pngBytes(t, 2, 5)}, {split + "/digitStruct.mat", mat},
		})
	}
	out, err := Convert("svhn", Options{Directory: dir, OutputDirectory: dir, Format: 1})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(out) != "svhn_format_1.hdf5" {
		t.Errorf("wrote %s", out)
	}
	d, err := h5.Open(out, []string{"train", "test", "extra"}, h5.Options{LoadInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	data, err := d.GetData(fuel.Request{Start: 0, Stop: 6})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for k, src := range d.Sources() {
		parts, err := data[k].Parts()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts[:2] {
			if src == "features" {
				got[src] = append(got[src], fmt.Sprint(p.Shape))
				continue
			}
			var vals []string
			for i := 0; i < p.Size(); i++ {
				vals = append(vals, fmt.Sprint(p.Flat(i)))
			}
			got[src] = append(got[src], fmt.Sprint(p.Shape, vals))
		}
	}
	want := map[string][]string{
		"features":     {"[3 3 4]", "[3 5 2]"},
		"bbox_labels":  {"[3 1] [0 2 3]", "[1 1] [4]"},
		"bbox_heights": {"[3 1] [30 31 32]", "[1 1] [4]"},
		"bbox_widths":  {"[3 1] [7 8 9]", "[1 1] [4]"},
		"bbox_lefts":   {"[3 1] [0 40 50]", "[1 1] [4]"},
		"bbox_tops":    {"[3 1] [5 6 7]", "[1 1] [4]"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestConvertSVHNFormat1BadInput: a corrupt archive, a missing image or
// digitStruct.mat, and a digitStruct.mat that is not HDF5 or lacks the
// group give errors naming the problem, and no output file.
func TestConvertSVHNFormat1BadInput(t *testing.T) {
	good := func(split string, mat []byte) [][2]any {
		return [][2]any{{split + "/1.png", pngBytes(t, 2, 2)}, {split + "/digitStruct.mat", mat}}
	}
	for _, c := range []struct {
		name    string
		members func(split string) [][2]any
		raw     []byte
		want    string
	}{
		{"corrupt", nil, []byte("\x1f\x8b\x08 not gzip"), "train.tar.gz"},
		{"not gzip", nil, []byte("plain text"), "not a gzipped tar"},
		{"no struct", func(s string) [][2]any { return [][2]any{{s + "/1.png", pngBytes(t, 2, 2)}} }, nil, "no member train/digitStruct.mat"},
		{"missing png", func(s string) [][2]any {
			return [][2]any{{s + "/2.png", pngBytes(t, 2, 2)}, {s + "/digitStruct.mat", []byte("x")}}
		}, nil, "no train/1.png"},
		{"struct not hdf5", func(s string) [][2]any { return good(s, []byte("MATLAB 5.0 MAT-file, not HDF5")) }, nil, "digitStruct.mat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, split := range []string{"train", "test", "extra"} {
				p := filepath.Join(dir, split+".tar.gz")
				if c.raw != nil {
					os.WriteFile(p, c.raw, 0o644)
				} else {
					writeTarGz(t, p, c.members(split))
				}
			}
			_, err := Convert("svhn", Options{Directory: dir, OutputDirectory: dir, Format: 1})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*.hdf5")); len(m) > 0 {
				t.Errorf("a failed conversion left %v", m)
			}
		})
	}
}

// TestReadDigitStructBadFiles: HDF5 files of the wrong layout give
// errors, not crashes.
func TestReadDigitStructBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"no group":       `f = h5py.File(p, 'w'); f['x'] = [1]`,
		"bbox not refs":  `f = h5py.File(p, 'w'); f['digitStruct/bbox'] = [[1.0]]`,
		"ref to dataset": `f = h5py.File(p, 'w'); d = f.create_dataset('a', data=[1]); f.create_dataset('digitStruct/bbox', (1, 1), dtype=h5py.special_dtype(ref=h5py.Reference))[...] = [[d.ref]]`,
		"missing field":  `f = h5py.File(p, 'w'); g = f.create_group('digitStruct/im'); f.create_dataset('digitStruct/bbox', (1, 1), dtype=h5py.special_dtype(ref=h5py.Reference))[...] = [[g.ref]]`,
		"bad name":       `f = h5py.File(p, 'w'); g = f.create_group('digitStruct/im'); g['label'] = [[b'nope'], [b'../x']]; f.create_dataset('digitStruct/bbox', (1, 1), dtype=h5py.special_dtype(ref=h5py.Reference))[...] = [[g.ref]]`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".mat")
		if out, err := exec.Command("/usr/bin/python3", "-c", "import sys, h5py\np = sys.argv[1]\n"+script+"\nf.close()", p).CombinedOutput(); err != nil {
			t.Skipf("Debian's python3-h5py writes the files: %v\n%s", err, out)
		}
		if _, err := h5.ReadDigitStruct(p); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
