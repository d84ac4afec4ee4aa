package datasets

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// writeLike writes a small file with the layout Fuel's converter gives
// the dataset (fill_hdf5_file's sources and splits, the converter's axis
// labels), with pixel values that encode (split, example, element).
func writeLike(t *testing.T, path string, splits map[string]int, order []string, sources map[string][]int, dtypes map[string]nd.DType, labels map[string][]string) {
	t.Helper()
	w, err := h5.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var data []h5.SplitData
	names := make([]string, 0, len(sources))
	for s := range sources {
		names = append(names, s)
	}
	slices.Sort(names)
	for k, split := range order {
		for _, src := range names {
			a := nd.New(dtypes[src], append([]int{splits[split]}, sources[src]...)...)
			for i := 0; i < a.Size(); i++ {
				a.SetFlat(i, float64((k*31+i)%200))
			}
			data = append(data, h5.SplitData{Split: split, Source: src, Data: a})
		}
	}
	if err := w.Fill(data, labels); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

var (
	imgLabels = []string{"batch", "channel", "height", "width"}
	idxLabels = []string{"batch", "index"}
)

func TestFileDatasets(t *testing.T) {
	dir := t.TempDir()
	useDataPath(t, dir)
	u8 := nd.Uint8
	writeLike(t, filepath.Join(dir, "binarized_mnist.hdf5"), map[string]int{"train": 5, "valid": 2, "test": 3}, []string{"train", "valid", "test"},
		map[string][]int{"features": {1, 28, 28}}, map[string]nd.DType{"features": u8}, map[string][]string{"features": imgLabels})
	writeLike(t, filepath.Join(dir, "cifar10.hdf5"), map[string]int{"train": 4, "test": 2}, []string{"train", "test"},
		map[string][]int{"features": {3, 32, 32}, "targets": {1}}, map[string]nd.DType{"features": u8, "targets": u8},
		map[string][]string{"features": imgLabels, "targets": idxLabels})
	writeLike(t, filepath.Join(dir, "cifar100.hdf5"), map[string]int{"train": 4, "test": 2}, []string{"train", "test"},
		map[string][]int{"features": {3, 32, 32}, "coarse_labels": {1}, "fine_labels": {1}},
		map[string]nd.DType{"features": u8, "coarse_labels": u8, "fine_labels": u8},
		map[string][]string{"features": imgLabels, "coarse_labels": idxLabels, "fine_labels": idxLabels})
	writeLike(t, filepath.Join(dir, "svhn_format_2.hdf5"), map[string]int{"train": 3, "test": 2, "extra": 4}, []string{"train", "test", "extra"},
		map[string][]int{"features": {3, 32, 32}, "targets": {1}}, map[string]nd.DType{"features": u8, "targets": u8},
		map[string][]string{"features": imgLabels, "targets": idxLabels})
	writeLike(t, filepath.Join(dir, "iris.hdf5"), map[string]int{"all": 6}, []string{"all"},
		map[string][]int{"features": {4}, "targets": {1}}, map[string]nd.DType{"features": nd.Float32, "targets": u8},
		map[string][]string{"features": {"batch", "feature"}, "targets": idxLabels})
	writeLike(t, filepath.Join(dir, "caltech101_silhouettes16.hdf5"), map[string]int{"train": 3, "valid": 2, "test": 2}, []string{"train", "valid", "test"},
		map[string][]int{"features": {1, 16, 16}, "targets": {1}}, map[string]nd.DType{"features": u8, "targets": u8},
		map[string][]string{"features": imgLabels, "targets": idxLabels})

	for _, c := range []struct {
		open     func() (*FileDataset, error)
		n        int
		sources  []string
		shape    []int // features' example shape
		defaults bool
	}{
		{func() (*FileDataset, error) { return BinarizedMNIST([]string{"valid", "test"}, H5Options{}) }, 5, []string{"features"}, []int{1, 28, 28}, false},
		{func() (*FileDataset, error) { return CIFAR10([]string{"train"}, H5Options{}) }, 4, []string{"features", "targets"}, []int{3, 32, 32}, true},
		{func() (*FileDataset, error) { return CIFAR100([]string{"test"}, H5Options{}) }, 2, []string{"coarse_labels", "features", "fine_labels"}, []int{3, 32, 32}, true},
		{func() (*FileDataset, error) { return SVHN(2, []string{"extra"}, H5Options{}) }, 4, []string{"features", "targets"}, []int{3, 32, 32}, true},
		{func() (*FileDataset, error) { return Iris([]string{"all"}, H5Options{Subset: h5.Range(1, 5)}) }, 4, []string{"features", "targets"}, []int{4}, false},
		{func() (*FileDataset, error) {
			return CalTech101Silhouettes([]string{"train"}, 16, H5Options{Sources: []string{"targets", "features"}})
		}, 3, []string{"targets", "features"}, []int{1, 16, 16}, false},
	} {
		d, err := c.open()
		if err != nil {
			t.Fatal(err)
		}
		if d.NumExamples() != c.n || !slices.Equal(d.Sources(), c.sources) || (len(d.DefaultTransformers()) > 0) != c.defaults {
			t.Errorf("%s: %d examples, sources %v, defaults %v", d.Name(), d.NumExamples(), d.Sources(), d.DefaultTransformers())
		}
		out, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
		if err != nil {
			t.Fatal(err)
		}
		fi := slices.Index(d.Sources(), "features")
		if got := out[fi].Shape[1:]; !slices.Equal(got, c.shape) {
			t.Errorf("%s: features %v, want (N, %v)", d.Name(), out[fi].Shape, c.shape)
		}
		if !slices.Equal(d.AxisLabels()["features"][:1], []string{"batch"}) {
			t.Errorf("%s: labels %v", d.Name(), d.AxisLabels())
		}
		d.Close()
	}
	// Several splits give their union in the file's order, whatever order
	// which_sets names them in.
	d, _ := BinarizedMNIST([]string{"test", "valid"}, H5Options{LoadInMemory: new(bool)})
	out, _ := d.GetData(fuel.Request{Indices: []int{2}})
	d.Close()
	// Example 2 of valid+test is test's first: writeLike's third split
	// (k = 2), whose first value is 2*31.
	if v := out[0].Data.([]uint8)[0]; v != 62 {
		t.Errorf("valid+test example 2 starts with %d, want 62", v)
	}

	// Errors: a missing file names the data path, a wrong split the file's.
	if _, err := CIFAR10([]string{"valid"}, H5Options{}); err == nil || !strings.Contains(err.Error(), `split "valid" is not in the file`) {
		t.Errorf("wrong split: %v", err)
	}
	var nf *config.NotFoundError
	if _, err := SVHN(1, []string{"train"}, H5Options{}); !errors.As(err, &nf) || !strings.Contains(err.Error(), "svhn_format_1.hdf5") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := SVHN(3, []string{"train"}, H5Options{}); err == nil || !strings.Contains(err.Error(), "which_format") {
		t.Errorf("format 3: %v", err)
	}
	if _, err := CalTech101Silhouettes([]string{"train"}, 20, H5Options{}); err == nil || !strings.Contains(err.Error(), "size must be 16 or 28") {
		t.Errorf("size 20: %v", err)
	}
}
