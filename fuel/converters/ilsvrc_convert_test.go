//go:build cgo

package converters

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// standinImage is one image of the small stand-in inputs
// (make_standin_devkit.py --small): its set, file name, 0-based class (nil
// for ILSVRC2012's unlabelled test images) and gray value.
type standinImage struct {
	Set   string
	Name  string
	Cls   *int
	Value int
}

// smallStandin writes the small stand-in inputs of both converters under
// dir (dir/2010, dir/2012) with /usr/bin/python3 (scipy.io.savemat writes
// meta.mat, PIL the JPEGs) and returns the manifest.
func smallStandin(t *testing.T, dir string) map[string][]standinImage {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import scipy.io, PIL, h5py, numpy").Run() != nil {
		t.Skip("Debian's python3-scipy, python3-pil and python3-h5py are the reference (not installed)")
	}
	out, err := exec.Command("/usr/bin/python3", filepath.Join("testdata", "make_standin_devkit.py"), "--small", dir).Output()
	if err != nil {
		t.Fatalf("make_standin_devkit.py --small: %v", err)
	}
	var m map[string][]standinImage
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// readBackPy reads a converted ILSVRC file with h5py and PIL: the
// datasets' shapes and dtypes, the split rows, each example's file name,
// target (None past the targets' rows), decoded mean gray value and byte
// count, and numpy's RandomState(seed).permutation(n_train).
const readBackPy = `
import sys, io, json, h5py, numpy
from PIL import Image
seed = int(sys.argv[2])
with h5py.File(sys.argv[1], 'r') as f:
    out = dict(shapes={k: list(f[k].shape) for k in f}, dtypes={k: str(f[k].dtype) for k in f},
               vlen=str(h5py.check_dtype(vlen=f['encoded_images'].dtype)),
               splits=[[r['split'].decode(), r['source'].decode(), int(r['start']), int(r['stop']), bool(r['available'])]
                       for r in f.attrs['split']],
               attrs={k: f.attrs[k].decode() for k in f.attrs if k != 'split'}, rows=[])
    n = f['filenames'].shape[0]
    for i in range(n):
        data = f['encoded_images'][i].tobytes()
        im = numpy.array(Image.open(io.BytesIO(data)))
        out['rows'].append(dict(name=f['filenames'][i][0].decode('ascii'),
                                target=int(f['targets'][i][0]) if i < f['targets'].shape[0] else None,
                                value=int(round(float(im.mean()))), shape=list(im.shape), nbytes=len(data)))
    n_train = [r for r in out['splits'] if r[0] == 'train'][0][3]
    out['perm'] = [int(x) for x in numpy.random.RandomState(seed).permutation(n_train)]
json.dump(out, sys.stdout)
`

type readBack struct {
	Shapes map[string][]int
	Dtypes map[string]string
	Vlen   string
	Splits [][]any
	Attrs  map[string]string
	Rows   []struct {
		Name   string
		Target *int
		Value  int
		Shape  []int
		Nbytes int
	}
	Perm []int
}

// expectedRows is the file's example order: the training images in the
// producer's order (the class TARs in archive order, each one's images by
// sorted name) placed by the permutation, then the validation and test
// images by sorted name.
func expectedRows(images []standinImage, perm []int) []standinImage {
	var train, valid, test []standinImage
	for _, im := range images {
		switch im.Set {
		case "train":
			train = append(train, im)
		case "valid":
			valid = append(valid, im)
		case "test":
			test = append(test, im)
		}
	}
	byName := func(a, b standinImage) int { return strings.Compare(a.Name, b.Name) }
	// Stable within each class: the classes stay in archive order.
	slices.SortStableFunc(train, func(a, b standinImage) int {
		if *a.Cls != *b.Cls {
			return *a.Cls - *b.Cls
		}
		return byName(a, b)
	})
	slices.SortFunc(valid, byName)
	slices.SortFunc(test, byName)
	rows := make([]standinImage, len(train))
	for i, im := range train {
		rows[perm[i]] = im
	}
	return append(append(rows, valid...), test...)
}

// TestConvertILSVRC: convert_ilsvrc2010 and convert_ilsvrc2012 end to end
// on small stand-in inputs in the real layout (a devkit with meta.mat
// written by scipy, a TAR of class TARs, gzipped JPEGs, patch images for
// 2010). h5py and PIL read the output back: the datasets' shapes and
// dtypes, the split rows (2012's test split has no targets), each
// example's file name, target and decoded gray value, the training set
// placed by numpy's RandomState(seed).permutation; H5PYDataset reads the
// same names, targets and image bytes through every split.
func TestConvertILSVRC(t *testing.T) {
	dir := t.TempDir()
	manifest := smallStandin(t, filepath.Join(dir, "in"))
	for _, year := range []int{2010, 2012} {
		dataset := fmt.Sprintf("ilsvrc%d", year)
		outDir := filepath.Join(dir, "out"+dataset)
		os.MkdirAll(outDir, 0o755)
		seed := 3 + year%7
		path, err := Convert(dataset, Options{Directory: filepath.Join(dir, "in", fmt.Sprint(year)), OutputDirectory: outDir, ShuffleSeed: &seed, Command: "test"})
		if err != nil {
			t.Fatalf("%s: %v", dataset, err)
		}
		if filepath.Base(path) != dataset+".hdf5" {
			t.Errorf("%s: wrote %s", dataset, path)
		}
		b, err := exec.Command("/usr/bin/python3", "-c", readBackPy, path, fmt.Sprint(seed)).Output()
		if err != nil {
			t.Fatalf("%s: h5py: %v", dataset, err)
		}
		var got readBack
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		images := manifest[fmt.Sprint(year)]
		n, nTrain, nValid, nTest := len(images), 18, 7, 5
		labeled := n
		if year == 2012 {
			labeled = nTrain + nValid
		}
		wantShapes := map[string][]int{"encoded_images": {n}, "filenames": {n, 1}, "targets": {labeled, 1}}
		wantDtypes := map[string]string{"encoded_images": "object", "filenames": "|S32", "targets": "int16"}
		for k := range wantShapes {
			if !slices.Equal(got.Shapes[k], wantShapes[k]) || got.Dtypes[k] != wantDtypes[k] {
				t.Errorf("%s: %s is %v %s, want %v %s", dataset, k, got.Shapes[k], got.Dtypes[k], wantShapes[k], wantDtypes[k])
			}
		}
		if len(got.Shapes) != 3 || got.Vlen != "uint8" || got.Attrs["fuel_convert_command"] != "test" || got.Attrs["h5py_interface_version"] != "0.3" {
			t.Errorf("%s: datasets %v, vlen %s, attrs %v", dataset, got.Shapes, got.Vlen, got.Attrs)
		}
		var splits []string
		for _, r := range got.Splits {
			splits = append(splits, strings.TrimSpace(fmt.Sprintln(r...)))
		}
		testTargets := fmt.Sprint("test targets ", nTrain+nValid, " ", n, " true")
		if year == 2012 {
			testTargets = "test targets 0 0 false"
		}
		wantSplits := []string{
			"train encoded_images 0 18 true", "train filenames 0 18 true", "train targets 0 18 true",
			"valid encoded_images 18 25 true", "valid filenames 18 25 true", "valid targets 18 25 true",
			"test encoded_images 25 30 true", "test filenames 25 30 true", testTargets,
		}
		if !slices.Equal(splits, wantSplits) {
			t.Errorf("%s: split rows\n%s\nwant\n%s", dataset, strings.Join(splits, "\n"), strings.Join(wantSplits, "\n"))
		}
		want := expectedRows(images, got.Perm)
		if len(want) != n || n != nTrain+nValid+nTest || len(got.Rows) != n {
			t.Fatalf("%s: %d rows, %d expected", dataset, len(got.Rows), len(want))
		}
		for i, r := range got.Rows {
			w := want[i]
			wantTarget := w.Cls
			if i >= labeled {
				wantTarget = nil
			}
			if r.Name != w.Name || (r.Target == nil) != (wantTarget == nil) || r.Target != nil && *r.Target != *wantTarget ||
				r.Value < w.Value-3 || r.Value > w.Value+3 || !slices.Equal(r.Shape, []int{8, 8, 3}) {
				t.Errorf("%s: row %d: %s target %v value %d %v; want %s target %v value %d", dataset, i, r.Name, ptr(r.Target), r.Value, r.Shape, w.Name, ptr(wantTarget), w.Value)
			}
		}

		// H5PYDataset: every split, every source it provides.
		for _, split := range []string{"train", "valid", "test"} {
			d, err := h5.Open(path, []string{split}, h5.Options{})
			if err != nil {
				t.Fatalf("%s %s: %v", dataset, split, err)
			}
			start := map[string]int{"train": 0, "valid": nTrain, "test": nTrain + nValid}[split]
			wantSources := []string{"encoded_images", "filenames", "targets"}
			if year == 2012 && split == "test" {
				wantSources = wantSources[:2]
			}
			if !slices.Equal(d.Sources(), wantSources) {
				t.Errorf("%s %s: sources %v, want %v", dataset, split, d.Sources(), wantSources)
			}
			data, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
			if err != nil {
				t.Fatalf("%s %s: %v", dataset, split, err)
			}
			for i := range d.NumExamples() {
				r := got.Rows[start+i]
				im := data[0].Data.([]*nd.Array)[i]
				name := string(data[1].Data.([][]byte)[i])
				if name != r.Name || im.Size() != r.Nbytes {
					t.Errorf("%s %s %d: %q, %d bytes; h5py %q, %d bytes", dataset, split, i, name, im.Size(), r.Name, r.Nbytes)
				}
				if len(data) == 3 && int(data[2].Data.([]int16)[i]) != *r.Target {
					t.Errorf("%s %s %d: target %d, h5py %d", dataset, split, i, data[2].Data.([]int16)[i], *r.Target)
				}
			}
			d.Close()
		}
	}
}

func ptr(p *int) any {
	if p == nil {
		return "None"
	}
	return *p
}

// rewriteTar copies a (plain or gzipped) TAR, dropping the members drop
// says to and replacing the data of those edit returns non-nil for.
func rewriteTar(t *testing.T, path string, gz bool, drop func(name string) bool, edit func(name string, data []byte) []byte) {
	t.Helper()
	var members [][2]any
	err := eachTarMember(path, func(hdr *tar.Header, r io.Reader) (bool, error) {
		b, err := io.ReadAll(r)
		if err != nil {
			return false, err
		}
		if drop != nil && drop(hdr.Name) {
			return false, nil
		}
		if edit != nil {
			if e := edit(hdr.Name, b); e != nil {
				b = e
			}
		}
		members = append(members, [2]any{hdr.Name, b})
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if gz {
		writeTarGz(t, path, members)
	} else {
		writeTar(t, path, members)
	}
}

// TestConvertILSVRCBadInput: a missing archive, a development kit without
// meta.mat, a training TAR of images instead of class TARs, an image
// missing from the validation TAR, a patch image no set uses, an inner
// TAR whose WordNet ID is no class, a JPEG that is neither an image nor
// gzip: each gives an error that says what is wrong, and no output file
// is left.
func TestConvertILSVRCBadInput(t *testing.T) {
	dir := t.TempDir()
	smallStandin(t, filepath.Join(dir, "clean"))
	cases := []struct {
		name, year, want string
		spoil            func(in string)
	}{
		{"missing archive", "2010", "ILSVRC2010_images_val.tar", func(in string) {
			os.Remove(filepath.Join(in, ILSVRC2010ValidImagesTar))
		}},
		{"devkit without meta.mat", "2010", "meta.mat", func(in string) {
			rewriteTar(t, filepath.Join(in, ILSVRC2010DevkitArchive), true, func(n string) bool { return strings.HasSuffix(n, "meta.mat") }, nil)
		}},
		{"2012 devkit without ground truth", "2012", "validation_ground_truth", func(in string) {
			rewriteTar(t, filepath.Join(in, ILSVRC2012DevkitArchive), true, func(n string) bool { return strings.Contains(n, "ground_truth") }, nil)
		}},
		{"train TAR of images", "2012", "n00002012", func(in string) {
			writeTar(t, filepath.Join(in, ILSVRC2012TrainImagesTar), [][2]any{{"n00002012_1.JPEG", []byte("\xff\xd8\xff")}})
		}},
		{"image missing from valid", "2012", "holds 6 images", func(in string) {
			rewriteTar(t, filepath.Join(in, ILSVRC2012ValidImagesTar), false, func(n string) bool { return strings.HasSuffix(n, "00000004.JPEG") }, nil)
		}},
		{"unused patch", "2010", "not all patch images were used", func(in string) {
			// The valid patch renamed to a name no image has.
			var members [][2]any
			eachTarMember(filepath.Join(in, ILSVRC2010PatchImagesTar), func(hdr *tar.Header, r io.Reader) (bool, error) {
				b, _ := io.ReadAll(r)
				name := hdr.Name
				if strings.Contains(name, "/val/") {
					name = "patch_images/val/ILSVRC2010_val_99999999.JPEG"
				}
				members = append(members, [2]any{name, b})
				return false, nil
			})
			writeTar(t, filepath.Join(in, ILSVRC2010PatchImagesTar), members)
		}},
		{"unknown class", "2010", "wnid_map", func(in string) {
			var members [][2]any
			eachTarMember(filepath.Join(in, ILSVRC2010TrainImagesTar), func(hdr *tar.Header, r io.Reader) (bool, error) {
				b, _ := io.ReadAll(r)
				name := hdr.Name
				if name == "n00002011.tar" {
					name = "n99999999.tar"
				}
				members = append(members, [2]any{name, b})
				return false, nil
			})
			writeTar(t, filepath.Join(in, ILSVRC2010TrainImagesTar), members)
		}},
		{"not an image", "2012", "ILSVRC2012_test_00000002.JPEG", func(in string) {
			rewriteTar(t, filepath.Join(in, ILSVRC2012TestImagesTar), false, nil, func(n string, b []byte) []byte {
				if strings.HasSuffix(n, "00000002.JPEG") {
					return []byte("not a JPEG at all")
				}
				return nil
			})
		}},
	}
	for i, c := range cases {
		in := filepath.Join(dir, fmt.Sprint("in", i))
		if err := os.CopyFS(in, os.DirFS(filepath.Join(dir, "clean", c.year))); err != nil {
			t.Fatal(err)
		}
		c.spoil(in)
		out := filepath.Join(dir, fmt.Sprint("out", i))
		os.MkdirAll(out, 0o755)
		seed := 1
		_, err := Convert("ilsvrc"+c.year, Options{Directory: in, OutputDirectory: out, ShuffleSeed: &seed})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one mentioning %q", c.name, err, c.want)
		}
		if c.name == "missing archive" {
			var missing *MissingInputFilesError
			if !errors.As(err, &missing) || !slices.Equal(missing.Files, []string{ILSVRC2010ValidImagesTar}) {
				t.Errorf("%s: %v, want MissingInputFiles", c.name, err)
			}
		}
		if left, _ := os.ReadDir(out); len(left) != 0 {
			t.Errorf("%s: left %v in the output directory", c.name, left)
		}
	}
	seed := -1
	if _, err := Convert("ilsvrc2012", Options{Directory: filepath.Join(dir, "clean", "2012"), OutputDirectory: dir, ShuffleSeed: &seed}); err == nil || !strings.Contains(err.Error(), "shuffle_seed -1") {
		t.Errorf("negative seed: %v", err)
	}
}
