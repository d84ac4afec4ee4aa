//go:build cgo

package converters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel/h5"
)

// ilsvrcFile is an ILSVRC file as h5py (the reference) reads it.
type ilsvrcFile struct {
	Filenames []string
	Targets   []int
	Images    []string // hex of each image's bytes
	Perm      []int    // numpy RandomState(seed).permutation(n), when asked
	Dtypes    []string // filenames, targets, encoded_images' vlen base
	Split     [][]any  // (split, source, start, stop)
}

func readILSVRCWithH5py(t *testing.T, path string, seed, n int) ilsvrcFile {
	t.Helper()
	var got ilsvrcFile
	cmd := exec.Command("/usr/bin/python3", "-c", `
import h5py, json, sys, numpy
seed, n = int(sys.argv[2]), int(sys.argv[3])
with h5py.File(sys.argv[1], 'r') as f:
    out = dict(
        Filenames=[s.decode('ascii') for s in f['filenames'][:, 0]],
        Targets=[int(x) for x in f['targets'][:, 0]],
        Images=[bytes(bytearray(e)).hex() for e in f['encoded_images'][:]],
        Dtypes=[str(f['filenames'].dtype), str(f['targets'].dtype),
                str(h5py.check_dtype(vlen=f['encoded_images'].dtype))],
        Split=[[r['split'].decode(), r['source'].decode(), int(r['start']), int(r['stop'])]
               for r in f.attrs['split']])
    if seed >= 0:
        out['Perm'] = [int(x) for x in numpy.random.RandomState(seed).permutation(n)]
print(json.dumps(out))
`, path, fmt.Sprint(seed), fmt.Sprint(n))
	b, err := cmd.Output()
	if err != nil {
		if exec.Command("/usr/bin/python3", "-c", "import h5py, numpy").Run() != nil {
			t.Skipf("Debian's python3-h5py is the reference: %v", err)
		}
		t.Fatalf("h5py: %v", err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// fakeJPEGs makes n JPEG members named <prefix>_<k>.JPEG (some gzipped,
// as ILSVRC2010 has some) in a shuffled member order; want maps each name
// to the image bytes the converter must store.
func fakeJPEGs(t *testing.T, rng *rand.Rand, dir, prefix string, n int, want map[string][]byte) [][2]any {
	var members [][2]any
	for k := range n {
		name := fmt.Sprintf("%s_%d.JPEG", prefix, k)
		img := grayJPEG(t, 1+rng.IntN(4), 1+rng.IntN(4), uint8(rng.IntN(256)))
		want[name] = img
		data := img
		if rng.IntN(4) == 0 {
			data = gzipped(img)
		}
		members = append(members, [2]any{dir + name, data})
	}
	rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return members
}

func tarBytes(t *testing.T, members [][2]any) []byte {
	p := filepath.Join(t.TempDir(), "x.tar")
	writeTar(t, p, members)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// trainFixture is test_process_train_set's setUp: a TAR of 5 class TARs
// of 45 to 55 JPEGs each, 10 of them replaced by patches.
func trainFixture(t *testing.T, dir string) (train, patch string, wnidMap map[string]int, order []string, class map[string]int, want map[string][]byte) {
	rng := rand.New(rand.NewPCG(20150925, 0))
	want, class, wnidMap = map[string][]byte{}, map[string]int{}, map[string]int{}
	var outer [][2]any
	var all []string
	for c := range 5 {
		wnid := fmt.Sprintf("n%08d", 1000+c*7)
		wnidMap[wnid] = c
		inner := fakeJPEGs(t, rng, wnid+"/", wnid, 45+rng.IntN(11), want)
		var names []string
		for _, m := range inner {
			base := filepath.Base(m[0].(string))
			names = append(names, base)
			class[base] = c
		}
		slices.Sort(names)
		order = append(order, names...)
		all = append(all, names...)
		outer = append(outer, [2]any{wnid + ".tar", tarBytes(t, inner)})
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var patches [][2]any
	for _, name := range all[:10] {
		want[name] = grayJPEG(t, 5, 5, uint8(len(patches)*20))
		patches = append(patches, [2]any{"patch_images/train/" + name, want[name]})
	}
	// Patches of the other sets are not the training set's.
	patches = append(patches, [2]any{"patch_images/val/" + all[10], grayJPEG(t, 2, 2, 1)})
	train, patch = filepath.Join(dir, "ILSVRC2010_images_train.tar"), filepath.Join(dir, "patch_images.tar")
	writeTar(t, train, outer)
	writeTar(t, patch, patches)
	return train, patch, wnidMap, order, class, want
}

// TestProcessTrainSet ports test_process_train_set and checks more than
// it: every image's bytes (patched, plain, gunzipped), target and file
// name, read back with h5py; without a seed the images are in Fuel's
// order (class TARs in archive order, each sorted); with one, image i
// sits at numpy's RandomState(seed).permutation(n)[i].
func TestProcessTrainSet(t *testing.T) {
	dir := t.TempDir()
	train, patch, wnidMap, order, class, want := trainFixture(t, dir)
	n := len(order)
	for _, seed := range []int{-1, 1} {
		out := filepath.Join(dir, fmt.Sprintf("train%d.hdf5", seed))
		w, err := h5.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := PrepareILSVRC2010File(w, n, 3, 2); err != nil {
			t.Fatal(err)
		}
		var s *uint32
		if seed >= 0 {
			u := uint32(seed)
			s = &u
		}
		if err := ProcessTrainSet(w, train, patch, n, wnidMap, s); err != nil {
			w.Abort()
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := readILSVRCWithH5py(t, out, seed, n)
		if !slices.Equal(got.Dtypes, []string{"|S32", "int16", "uint8"}) {
			t.Errorf("dtypes %v", got.Dtypes)
		}
		if len(got.Filenames) != n+5 || len(got.Images) != n+5 {
			t.Fatalf("%d file names, %d images; want %d", len(got.Filenames), len(got.Images), n+5)
		}
		// The upstream assertion: the set of file names is the set of JPEGs.
		if !slices.Equal(slices.Sorted(slices.Values(got.Filenames[:n])), slices.Sorted(slices.Values(order))) {
			t.Errorf("seed %d: the file names are not the archive's JPEGs", seed)
		}
		for i, name := range order {
			at := i
			if seed >= 0 {
				at = got.Perm[i]
			}
			if got.Filenames[at] != name || got.Targets[at] != class[name] || got.Images[at] != fmt.Sprintf("%x", want[name]) {
				t.Fatalf("seed %d: example %d is %s (class %d); want image %d %s (class %d)", seed, at, got.Filenames[at], got.Targets[at], i, name, class[name])
			}
		}
		for i := n; i < n+5; i++ {
			if got.Filenames[i] != "" || got.Targets[i] != 0 || got.Images[i] != "" {
				t.Errorf("example %d of the valid/test range was written", i)
			}
		}
		wantSplit := map[string][2]int{"train": {0, n}, "valid": {n, n + 3}, "test": {n + 3, n + 5}}
		if len(got.Split) != 9 {
			t.Errorf("split rows %v, want 3 splits x 3 sources", got.Split)
		}
		for _, r := range got.Split {
			if w := wantSplit[r[0].(string)]; int(r[2].(float64)) != w[0] || int(r[3].(float64)) != w[1] {
				t.Errorf("split row %v, want %v", r, w)
			}
		}
	}
}

// TestProcessOtherSet ports test_process_other_set: 3 x 30-40 JPEGs,
// 15 patched, written at offset 50 with groundtruth i % 10; the file
// names are the members sorted, each with its bytes.
func TestProcessOtherSet(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(20151202, 0))
	want := map[string][]byte{}
	var members [][2]any
	for k := range 3 {
		members = append(members, fakeJPEGs(t, rng, fmt.Sprintf("dir%d/", k), fmt.Sprintf("ILSVRC2010_val_%d", k), 30+rng.IntN(11), want)...)
	}
	var sorted []string
	for _, m := range members {
		sorted = append(sorted, m[0].(string))
	}
	slices.Sort(sorted)
	shuffled := slices.Clone(sorted)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var patches [][2]any
	for i, p := range shuffled[:15] {
		base := filepath.Base(p)
		want[base] = grayJPEG(t, 3, 3, uint8(10*i))
		patches = append(patches, [2]any{"patch_images/val/" + base, want[base]})
	}
	patches = append(patches, [2]any{"patch_images/test/" + filepath.Base(shuffled[20]), grayJPEG(t, 2, 2, 1)})
	images, patch := filepath.Join(dir, "images.tar"), filepath.Join(dir, "patch_images.tar")
	writeTar(t, images, members)
	writeTar(t, patch, patches)
	raw, _ := os.ReadFile(images)
	imagesGz := filepath.Join(dir, "images.tar.gz")
	os.WriteFile(imagesGz, gzipped(raw), 0o644)

	const offset = 50
	n := len(sorted)
	groundtruth := make([]int, n)
	for i := range groundtruth {
		groundtruth[i] = i % 10
	}
	for _, archive := range []string{images, imagesGz} {
		out := filepath.Join(dir, filepath.Base(archive)+".hdf5")
		w, err := h5.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := PrepareILSVRC2010File(w, offset, n, 0); err != nil {
			t.Fatal(err)
		}
		if err := ProcessOtherSet(w, "valid", archive, patch, groundtruth, offset); err != nil {
			w.Abort()
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := readILSVRCWithH5py(t, out, -1, 0)
		if !slices.Equal(got.Targets[offset:], groundtruth) {
			t.Errorf("%s: targets %v, want the ground truth", filepath.Base(archive), got.Targets[offset:])
		}
		for i, p := range sorted {
			base := filepath.Base(p)
			if got.Filenames[offset+i] != base || got.Images[offset+i] != fmt.Sprintf("%x", want[base]) {
				t.Fatalf("%s: example %d is %q; want %q", filepath.Base(archive), offset+i, got.Filenames[offset+i], base)
			}
		}
		if slices.ContainsFunc(got.Filenames[:offset], func(s string) bool { return s != "" }) {
			t.Errorf("the training range was written")
		}
	}
}

// TestProcessSetsBadInput: Fuel's failures (an unused patch, a WordNet ID
// not in wnid_map, ground truth of the wrong length, a wrong count) and
// this port's own (a name too long for S32, a class outside int16, a
// corrupt archive) are errors, never a hang or a panic.
func TestProcessSetsBadInput(t *testing.T) {
	dir := t.TempDir()
	img := grayJPEG(t, 2, 2, 9)
	long := strings.Repeat("x", 30) + ".JPEG"
	images := filepath.Join(dir, "images.tar")
	writeTar(t, images, [][2]any{{"a.JPEG", img}, {"b.JPEG", img}})
	longTar := filepath.Join(dir, "long.tar")
	writeTar(t, longTar, [][2]any{{long, img}})
	noPatch := filepath.Join(dir, "nopatch.tar")
	writeTar(t, noPatch, [][2]any{{"readme", []byte("x")}})
	unused := filepath.Join(dir, "unused.tar")
	writeTar(t, unused, [][2]any{{"p/val/zzz.JPEG", img}, {"p/train/zzz.JPEG", img}})
	train := filepath.Join(dir, "train.tar")
	writeTar(t, train, [][2]any{{"n1.tar", tarBytes(t, [][2]any{{"n1/a.JPEG", img}, {"n1/b.JPEG", []byte("garbage")}})}})
	good := filepath.Join(dir, "good.tar")
	writeTar(t, good, [][2]any{{"n1.tar", tarBytes(t, [][2]any{{"n1/a.JPEG", img}})}})
	corrupt := filepath.Join(dir, "corrupt.tar")
	os.WriteFile(corrupt, bytes.Repeat([]byte{'x'}, 1000), 0o644)

	run := func(f func(w *h5.Writer) error) error {
		w, err := h5.Create(filepath.Join(t.TempDir(), "out.hdf5"))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Abort()
		if err := PrepareILSVRC2010File(w, 2, 2, 0); err != nil {
			t.Fatal(err)
		}
		return f(w)
	}
	for _, c := range []struct {
		what string
		f    func(w *h5.Writer) error
		want string
	}{
		{"unused patch", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "valid", images, unused, []int{1, 2}, 2)
		}, "not all patch images were used (0 of 1)"},
		{"short ground truth", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "valid", images, noPatch, []int{1}, 2)
		}, "holds 2 images, the ground truth has 1 labels"},
		{"past the file", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "valid", images, noPatch, []int{1, 2}, 3)
		}, "past"},
		{"name too long", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "test", longTar, noPatch, []int{1}, 2)
		}, "longer than 32 bytes"},
		{"class outside int16", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "valid", images, noPatch, []int{1, 40000}, 2)
		}, "does not fit the int16 targets"},
		{"corrupt image archive", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "valid", corrupt, noPatch, []int{1}, 2)
		}, "not a readable tar"},
		{"bad which_set", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "val", images, noPatch, []int{1, 2}, 2)
		}, "which_set must be one of"},
		{"unknown WordNet ID", func(w *h5.Writer) error {
			return ProcessTrainSet(w, good, noPatch, 1, map[string]int{"n2": 0}, nil)
		}, `WordNet ID "n1" is not in wnid_map`},
		{"a member that is not an image", func(w *h5.Writer) error {
			return ProcessTrainSet(w, train, noPatch, 2, map[string]int{"n1": 0}, nil)
		}, "neither an image nor gzipped"},
		{"fewer images than expected", func(w *h5.Writer) error {
			return ProcessTrainSet(w, good, noPatch, 2, map[string]int{"n1": 0}, nil)
		}, "sent 1 images, 2 expected"},
		{"more images than expected", func(w *h5.Writer) error {
			return ProcessTrainSet(w, good, noPatch, 0, map[string]int{"n1": 0}, nil)
		}, "more than the 0 images expected"},
		{"unused train patch", func(w *h5.Writer) error {
			return ProcessTrainSet(w, good, unused, 1, map[string]int{"n1": 0}, nil)
		}, "not all patch images were used"},
		{"corrupt train archive", func(w *h5.Writer) error {
			return ProcessTrainSet(w, corrupt, noPatch, 1, map[string]int{"n1": 0}, nil)
		}, "not a readable tar"},
		{"negative offset", func(w *h5.Writer) error {
			return ProcessOtherSet(w, "valid", images, noPatch, []int{1, 2}, -1)
		}, "negative offset"},
	} {
		if err := run(c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	w, _ := h5.Create(filepath.Join(t.TempDir(), "neg.hdf5"))
	defer w.Abort()
	if err := PrepareILSVRC2010File(w, -1, 0, 0); err == nil {
		t.Error("a negative set size: no error")
	}
}
