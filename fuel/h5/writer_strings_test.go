//go:build cgo

package h5

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// pyH5 runs a /usr/bin/python3 script with h5py (Debian's python3-h5py,
// the reference) and decodes its JSON output into out.
func pyH5(t *testing.T, script string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c", script}, args...)...)
	b, err := cmd.Output()
	if err != nil {
		if exec.Command("/usr/bin/python3", "-c", "import h5py, numpy").Run() != nil {
			t.Skipf("Debian's python3-h5py is the reference: %v", err)
		}
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("python: %v\n%s", err, msg)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("python output %q: %v", b, err)
	}
}

// TestStringSourceMatchesH5py: a fixed-length string source (Fuel's S32
// `filenames`) and a flat vlen uint8 source (ILSVRC's `encoded_images`)
// written here read back identically in h5py (dtype S32, shape, values,
// no shapes scale), and in ReadStringSource; a file h5py writes with
// numpy S-strings reads back the same here.
func TestStringSourceMatchesH5py(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"n01440764_10026.JPEG", "", "x", strings.Repeat("a", 32), "ILSVRC2010_val_00000001.JPEG"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	must(w.CreateStringSource("filenames", 32, []int{6, 1}, nil))
	must(w.CreateStringSource("pairs", 3, []int{2, 2}, []string{"batch", "which"}))
	must(w.CreateVlenSource("encoded_images", nd.Uint8, 3, nil, VlenLayout{Flat: true}))
	must(w.WriteStringRows("filenames", 1, names))
	must(w.WriteStringRows("pairs", 0, []string{"ab", "c", "", "xyz"}))
	must(w.WriteVlenExample("encoded_images", 0, nd.FromSlice([]uint8{6, 6, 6}, 3)))
	must(w.WriteVlenExample("encoded_images", 2, nd.FromSlice([]uint8{1, 8, 1, 2, 0}, 5)))
	must(w.AddSplit(SplitDef{Name: "train", Start: 0, Stop: 2}))
	must(w.Close())

	var got struct {
		Dtype, PairsDtype, ImagesDtype string
		Shape, PairsShape              []int
		Names, Pairs                   []string
		Images                         [][]int
		Keys                           []string
		Labels                         []string
	}
	pyH5(t, `
import h5py, json, sys
with h5py.File(sys.argv[1], 'r') as f:
    fn, pr, im = f['filenames'], f['pairs'], f['encoded_images']
    print(json.dumps(dict(
        Dtype=str(fn.dtype), PairsDtype=str(pr.dtype),
        ImagesDtype=str(h5py.check_dtype(vlen=im.dtype)),
        Shape=list(fn.shape), PairsShape=list(pr.shape),
        Names=[s.decode('ascii') for s in fn[:, 0]],
        Pairs=[s.decode('ascii') for s in pr[...].flatten()],
        Images=[[int(x) for x in e] for e in im[:]],
        Keys=sorted(f.keys()),
        Labels=[d.label for d in pr.dims])))
`, &got, path)
	wantNames := append([]string{""}, names...)
	if got.Dtype != "|S32" || got.PairsDtype != "|S3" || got.ImagesDtype != "uint8" {
		t.Errorf("h5py dtypes %s, %s, vlen %s; want |S32, |S3, vlen uint8", got.Dtype, got.PairsDtype, got.ImagesDtype)
	}
	if !slices.Equal(got.Shape, []int{6, 1}) || !slices.Equal(got.PairsShape, []int{2, 2}) {
		t.Errorf("h5py shapes %v, %v", got.Shape, got.PairsShape)
	}
	if !slices.Equal(got.Names, wantNames) || !slices.Equal(got.Pairs, []string{"ab", "c", "", "xyz"}) {
		t.Errorf("h5py reads %q and %q", got.Names, got.Pairs)
	}
	if len(got.Images) != 3 || !slices.Equal(got.Images[0], []int{6, 6, 6}) || len(got.Images[1]) != 0 || !slices.Equal(got.Images[2], []int{1, 8, 1, 2, 0}) {
		t.Errorf("h5py reads the images as %v", got.Images)
	}
	if !slices.Equal(got.Keys, []string{"encoded_images", "filenames", "pairs"}) {
		t.Errorf("datasets %v: a flat vlen source has no shapes datasets", got.Keys)
	}
	if !slices.Equal(got.Labels, []string{"batch", "which"}) {
		t.Errorf("axis labels %v", got.Labels)
	}
	vals, shape, err := ReadStringSource(path, "filenames")
	if err != nil || !slices.Equal(vals, wantNames) || !slices.Equal(shape, []int{6, 1}) {
		t.Errorf("ReadStringSource: %q %v %v", vals, shape, err)
	}

	// The other way: h5py writes numpy S-strings, this package reads them.
	path2 := filepath.Join(t.TempDir(), "py.hdf5")
	var ok bool
	pyH5(t, `
import h5py, numpy, sys, json
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('filenames', data=numpy.array([[b'foo.jpeg'], [b'bar.jpeg'], [b'']], dtype='S32'))
    f.create_dataset('x', data=numpy.arange(3))
print(json.dumps(True))
`, &ok, path2)
	vals, shape, err = ReadStringSource(path2, "filenames")
	if err != nil || !slices.Equal(vals, []string{"foo.jpeg", "bar.jpeg", ""}) || !slices.Equal(shape, []int{3, 1}) {
		t.Errorf("ReadStringSource of h5py's file: %q %v %v", vals, shape, err)
	}
	for _, c := range []struct{ name, want string }{
		{"x", "does not hold fixed-length strings"},
		{"nope", "nope"},
	} {
		if _, _, err := ReadStringSource(path2, c.name); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadStringSource(%q): %v, want %q", c.name, err, c.want)
		}
	}
	if _, _, err := ReadStringSource(filepath.Join(t.TempDir(), "missing.hdf5"), "filenames"); err == nil {
		t.Error("ReadStringSource of a missing file: no error")
	}
	checkNoOpenObjects(t)
}

// TestStringSourceBadInput: each misuse is an error naming the source,
// not a panic or a silently cut string.
func TestStringSourceBadInput(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "bad.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.CreateStringSource("s", 4, []int{2, 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.CreateSource("n", nd.Int16, []int{2, 1}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		err  error
		want string
	}{
		{"width 0", w.CreateStringSource("z", 0, []int{2}, nil), "width 0"},
		{"no axes", w.CreateStringSource("z", 4, nil, nil), "example axis"},
		{"labels", w.CreateStringSource("z", 4, []int{2}, []string{"a", "b"}), "2 axis labels"},
		{"twice", w.CreateStringSource("s", 4, []int{2}, nil), "already written"},
		{"too long", w.WriteStringRows("s", 0, []string{"abcde"}), "longer than the source's 4"},
		{"past end", w.WriteStringRows("s", 1, []string{"a", "b"}), "past its 2 examples"},
		{"negative", w.WriteStringRows("s", -1, []string{"a"}), "past its 2 examples"},
		{"not strings", w.WriteStringRows("n", 0, []string{"a"}), "does not hold fixed-length strings"},
		{"no source", w.WriteStringRows("q", 0, []string{"a"}), `no source "q"`},
		{"flat labels", w.CreateVlenSource("v", nd.Uint8, 2, []string{"batch", "x"}, VlenLayout{Flat: true}), "at most the batch axis"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, c.err, c.want)
		}
	}
	if err := w.CreateStringSource("r", 2, []int{2, 3}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteStringRows("r", 0, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "not whole rows") {
		t.Errorf("a part of a row: %v", err)
	}
}
