package datasets

import (
	"embed"
	"fmt"
	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/h5"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// mnistSplits are MNIST's splits in the order Fuel's mnist.hdf5 stores
// them (convert_mnist writes train, then test).
var mnistSplits = []string{"train", "test"}

// mnistIDXFiles names the idx files of each split (without ".gz").
var mnistIDXFiles = map[string]struct{ images, labels string }{
	"train": {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
	"test":  {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"},
}

// mnistAxisLabels are the axis labels convert_mnist gives the sources.
var mnistAxisLabels = map[string][]string{
	"features": {"batch", "channel", "height", "width"},
	"targets":  {"batch", "index"},
}

// MNISTOptions are MNIST's keyword arguments besides which_sets.
type MNISTOptions struct {
	// Subset keeps only these examples of the chosen splits (Fuel's
	// subset=); nil keeps all.
	Subset *Subset
	// Sources restricts the sources, in this order (Fuel's sources=);
	// nil gives ("features", "targets").
	Sources []string
	// Settings, when not nil, are a program's assignments to Fuel's
	// configuration (its data path), over the file and the environment.
	Settings *config.Settings
}

// MNISTDataset is MNIST as Fuel's MNIST dataset gives it, loaded in
// memory: the sources "features" (uint8, shape (N, 1, 28, 28), axes batch,
// channel, height, width) and "targets" (uint8, shape (N, 1), axes batch,
// index), as Fuel's converted mnist.hdf5 holds them. It is an
// IndexableDataset with Fuel's default transformers for MNIST.
type MNISTDataset struct {
	*IndexableDataset
	whichSets []string
	subset    *Subset
	embedded  bool
}

var _ transformers.DefaultTransformerer = (*MNISTDataset)(nil)

// MNIST is Fuel's MNIST(which_sets, subset=, sources=): 60,000 training
// and 10,000 test images of handwritten digits.
//
// whichSets names splits among "train" and "test". As in Fuel, whose
// H5PYDataset merges the splits' row ranges of the file, several splits
// give their union in the file's order — train before test, whatever
// order whichSets names them in, and a split named twice once.
//
// The data are read, through the data path (see fuel/config), from the
// four standard idx files train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, gzipped (".gz") or
// plain, in a directory of the data path or in its "mnist" subdirectory.
// Only the files of the chosen splits are read.
func MNIST(whichSets []string, opts MNISTOptions) (*MNISTDataset, error) {
	name := "MNIST(which_sets=" + pyTuple(whichSets) + ")"
	splits, err := chooseSplits(name, whichSets)
	if err != nil {
		return nil, err
	}
	data, err := loadMNIST(opts.Settings, splits)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", name, err)
	}
	return newMNIST(name, whichSets, splits, data, opts, false)
}

// loadMNIST loads the chosen splits of MNIST: from Fuel's own mnist.hdf5
// (what `fuel-convert mnist` writes) when the data path has one, else from
// the four idx files.
func loadMNIST(settings *config.Settings, splits []string) ([]mnistSplit, error) {
	if path, err := settings.FindFirst("mnist.hdf5"); err == nil {
		return loadMNISTHDF5(path, splits)
	}
	return loadMNISTIDX(func(base string) (io.ReadCloser, string, error) { return openFromDataPath(settings, base) }, splits)
}

// loadMNISTHDF5 reads each split's features and targets from a Fuel-format
// file.
func loadMNISTHDF5(path string, splits []string) ([]mnistSplit, error) {
	out := make([]mnistSplit, len(splits))
	for k, split := range splits {
		ds, err := h5.Open(path, []string{split}, h5.Options{LoadInMemory: true, Sources: []string{"features", "targets"}})
		if err != nil {
			return nil, err
		}
		arrays, err := ds.GetData(fuel.Request{Start: 0, Stop: ds.NumExamples()})
		ds.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		f, t := arrays[0], arrays[1]
		if f.DType() != nd.Uint8 || f.NDim() != 4 || t.NDim() != 2 {
			return nil, fmt.Errorf("%s: split %s is not MNIST as Fuel converts it: features %s%v, targets %s%v",
				path, split, f.DType(), f.Shape, t.DType(), t.Shape)
		}
		out[k] = mnistSplit{features: f, targets: t}
	}
	return out, nil
}

// mnistSplit holds one split as Fuel's mnist.hdf5 does.
type mnistSplit struct {
	features *nd.Array // uint8 (N, 1, rows, cols)
	targets  *nd.Array // uint8 (N, 1)
}

// idxOpener opens the idx file called base (gzipped or plain) and says
// where it was found.
type idxOpener func(base string) (rc io.ReadCloser, where string, err error)

// openFromDataPath finds base(.gz) in the data path or its mnist/
// subdirectories.
func openFromDataPath(settings *config.Settings, base string) (io.ReadCloser, string, error) {
	path, err := settings.FindFirst(base+".gz", base, "mnist/"+base+".gz", "mnist/"+base)
	if err != nil {
		return nil, "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	return f, path, nil
}

// loadMNISTIDX reads the idx files of the chosen splits and shapes them
// as Fuel's converter does (read_mnist_images, read_mnist_labels).
func loadMNISTIDX(open idxOpener, splits []string) ([]mnistSplit, error) {
	out := make([]mnistSplit, len(splits))
	for k, split := range splits {
		files := mnistIDXFiles[split]
		images, err := readIDXFrom(open, files.images)
		if err != nil {
			return nil, err
		}
		labels, err := readIDXFrom(open, files.labels)
		if err != nil {
			return nil, err
		}
		if images.DType() != nd.Uint8 || images.NDim() != 3 {
			return nil, fmt.Errorf("%s: want uint8 images of 3 dimensions (count, rows, columns), got %s%v", files.images, images.DType(), images.Shape)
		}
		if labels.DType() != nd.Uint8 || labels.NDim() != 1 {
			return nil, fmt.Errorf("%s: want a 1-d uint8 array of labels, got %s%v", files.labels, labels.DType(), labels.Shape)
		}
		n := images.Shape[0]
		if labels.Shape[0] != n {
			return nil, fmt.Errorf("%s split: %d images (%s) but %d labels (%s)", split, n, files.images, labels.Shape[0], files.labels)
		}
		out[k] = mnistSplit{
			features: &nd.Array{Shape: []int{n, 1, images.Shape[1], images.Shape[2]}, Data: images.Data},
			targets:  &nd.Array{Shape: []int{n, 1}, Data: labels.Data},
		}
	}
	return out, nil
}

func readIDXFrom(open idxOpener, base string) (*nd.Array, error) {
	rc, where, err := open(base)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	a, err := ReadIDXGzipOrPlain(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return a, nil
}

// chooseSplits checks which_sets and returns the distinct splits named,
// in the file's order.
func chooseSplits(name string, whichSets []string) ([]string, error) {
	if len(whichSets) == 0 {
		return nil, fmt.Errorf("datasets: %s: which_sets is empty (want splits among 'train', 'test')", name)
	}
	for _, s := range whichSets {
		if !slices.Contains(mnistSplits, s) {
			return nil, fmt.Errorf("datasets: %s: '%s' split is not provided by this dataset. Available splits are ('train', 'test')", name, s)
		}
	}
	var splits []string
	for _, s := range mnistSplits {
		if slices.Contains(whichSets, s) {
			splits = append(splits, s)
		}
	}
	return splits, nil
}

// newMNIST joins the splits, applies the subset and builds the dataset.
func newMNIST(name string, whichSets, splits []string, data []mnistSplit, opts MNISTOptions, embedded bool) (*MNISTDataset, error) {
	feats := make([]*nd.Array, len(data))
	targs := make([]*nd.Array, len(data))
	for i, d := range data {
		feats[i], targs[i] = d.features, d.targets
	}
	features, err := concat(feats)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: features: %w", name, err)
	}
	targets, err := concat(targs)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: targets: %w", name, err)
	}
	n := features.Shape[0]
	lo, hi, rows, err := opts.Subset.resolve(n)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", name, err)
	}
	if rows != nil {
		features, targets = features.Take(rows), targets.Take(rows)
	} else if lo != 0 || hi != n {
		// Copy, so that the rest of the data can be freed.
		features, targets = features.Slice(lo, hi).Copy(), targets.Slice(lo, hi).Copy()
	}
	ds, err := newIndexable(name, []Source{{"features", features}, {"targets", targets}},
		IndexableOptions{Sources: opts.Sources, AxisLabels: fuel.CloneAxisLabels(mnistAxisLabels)})
	if err != nil {
		return nil, err
	}
	return &MNISTDataset{IndexableDataset: ds, whichSets: slices.Clone(whichSets), subset: opts.Subset, embedded: embedded}, nil
}

func concat(parts []*nd.Array) (*nd.Array, error) {
	if len(parts) == 1 {
		return parts[0], nil
	}
	return nd.Concat(parts)
}

// WhichSets are the splits asked for, as given.
func (d *MNISTDataset) WhichSets() []string { return slices.Clone(d.whichSets) }

// Subset is the subset= argument (nil for None).
func (d *MNISTDataset) Subset() *Subset { return d.subset }

// Embedded reports whether the data are EmbeddedMNIST's small subset
// rather than the full MNIST files.
func (d *MNISTDataset) Embedded() bool { return d.embedded }

// DefaultTransformers are Fuel's MNIST.default_transformers,
// uint8_pixels_to_floatX(('features',)): ScaleAndShift(1/255.0, 0) and
// then Cast('floatX'), both on features.
func (d *MNISTDataset) DefaultTransformers() []transformers.Spec {
	return transformers.Uint8PixelsToFloatX([]string{"features"})
}

// embeddedMNIST holds EmbeddedMNIST's idx files (see embedded/README.md).
//
//go:embed embedded/*.gz
var embeddedMNIST embed.FS

// Sizes of EmbeddedMNIST's splits.
const (
	EmbeddedMNISTTrain = 5000
	EmbeddedMNISTTest  = 1000
)

// EmbeddedMNIST is a SMALL SUBSET of MNIST built into the binary, so
// that demos and tests run with no download: the first 5,000 of MNIST's
// 60,000 training examples (split "train") and the first 1,000 of its
// 10,000 test examples (split "test"). It is not MNIST: numbers measured
// on it (errors, costs, speed per epoch) are not comparable with
// published MNIST results. Otherwise it behaves as MNIST: same sources,
// dtypes, shapes, axis labels, split semantics, options and default
// transformers, and its examples are exactly MNIST's first ones.
//
// MNIST is by Yann LeCun and Corinna Cortes, under CC BY-SA 3.0; see
// fuel/datasets/embedded/README.md for how the subset was made.
func EmbeddedMNIST(whichSets []string, opts MNISTOptions) (*MNISTDataset, error) {
	name := "EmbeddedMNIST(which_sets=" + pyTuple(whichSets) + ")"
	splits, err := chooseSplits(name, whichSets)
	if err != nil {
		return nil, err
	}
	open := func(base string) (io.ReadCloser, string, error) {
		path := "embedded/" + base + ".gz"
		f, err := embeddedMNIST.Open(path)
		if err != nil {
			return nil, "", err
		}
		return f, "embedded " + path, nil
	}
	data, err := loadMNISTIDX(open, splits)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", name, err)
	}
	for k, s := range splits {
		want := map[string]int{"train": EmbeddedMNISTTrain, "test": EmbeddedMNISTTest}[s]
		if got := data[k].features.Shape[0]; got != want {
			return nil, fmt.Errorf("datasets: %s: the embedded %s split holds %d examples, not %d", name, s, got, want)
		}
	}
	return newMNIST(name, whichSets, splits, data, opts, true)
}

// EmbeddedMNISTFiles are EmbeddedMNIST's four gzipped idx files, by their
// MNIST names (train-images-idx3-ubyte.gz, ...): what a copy onto the data
// path, or a test's MNIST-shaped directory, is made from.
func EmbeddedMNISTFiles() fs.FS {
	sub, _ := fs.Sub(embeddedMNIST, "embedded") // fails only on an invalid path
	return sub
}

// pyTuple writes names as a Python tuple of strings: ('train',).
func pyTuple(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return nd.TupleString(q)
}
