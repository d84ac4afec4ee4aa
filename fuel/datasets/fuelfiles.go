package datasets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/fuel/transformers"
)

// H5Options are the keyword arguments Fuel's H5PYDataset subclasses pass
// on to H5PYDataset.
type H5Options struct {
	// Subset selects examples within the chosen splits (subset=).
	Subset *h5.Subset
	// LoadInMemory is load_in_memory=; nil keeps the class's default
	// (True for all but SVHN, as in Fuel).
	LoadInMemory *bool
	// NoSortIndices is sort_indices=False.
	NoSortIndices bool
	// Sources restricts the sources, in this order (sources=).
	Sources []string
	// Settings, when not nil, are a program's assignments to Fuel's
	// configuration (its data path), over the file and the environment.
	Settings *config.Settings
}

// FileDataset is one of Fuel's built-in datasets that read a converted
// HDF5 file from the data path (BinarizedMNIST, CIFAR10, CIFAR100, SVHN,
// Iris, CalTech101Silhouettes): an *h5.H5PYDataset with the class's name
// and default transformers.
type FileDataset struct {
	*h5.H5PYDataset
	name     string
	defaults []transformers.Spec
}

var _ transformers.DefaultTransformerer = (*FileDataset)(nil)

// Name is the class and its arguments, as Python would print the call.
func (d *FileDataset) Name() string { return d.name }

// DefaultTransformers are the class's default_transformers (none for
// BinarizedMNIST, Iris and CalTech101Silhouettes).
func (d *FileDataset) DefaultTransformers() []transformers.Spec { return slices.Clone(d.defaults) }

// openFileDataset finds filename in the data path and opens it as Fuel's
// H5PYDataset does (the file says which splits exist; splits names the
// class's, for the error on an empty which_sets).
func openFileDataset(name, filename string, splits []string, whichSets []string, inMemory bool, opts H5Options, defaults []transformers.Spec) (*FileDataset, error) {
	if len(whichSets) == 0 {
		return nil, fmt.Errorf("datasets: %s: which_sets is empty (choose among %s)", name, strings.Join(splits, ", "))
	}
	path, err := opts.Settings.FindFirst(filename)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", name, err)
	}
	if opts.LoadInMemory != nil {
		inMemory = *opts.LoadInMemory
	}
	d, err := h5.Open(path, whichSets, h5.Options{
		Subset:        opts.Subset,
		LoadInMemory:  inMemory,
		NoSortIndices: opts.NoSortIndices,
		Sources:       opts.Sources,
	})
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", name, err)
	}
	return &FileDataset{H5PYDataset: d, name: name, defaults: defaults}, nil
}

func call(class string, args ...string) string { return class + "(" + strings.Join(args, ", ") + ")" }

// BinarizedMNIST is Fuel's BinarizedMNIST(which_sets): Salakhutdinov's
// binarized MNIST, binarized_mnist.hdf5, splits train (50,000), valid
// (10,000) and test (10,000); source features, uint8 (N, 1, 28, 28) of 0
// and 1. Loaded in memory by default; no default transformers.
func BinarizedMNIST(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("BinarizedMNIST", "which_sets="+pyTuple(whichSets)), "binarized_mnist.hdf5",
		[]string{"train", "valid", "test"}, whichSets, true, opts, nil)
}

// CIFAR10 is Fuel's CIFAR10(which_sets): cifar10.hdf5, splits train
// (50,000) and test (10,000); features uint8 (N, 3, 32, 32), targets uint8
// (N, 1). Loaded in memory by default; default transformers scale the
// features to [0, 1] in floatX.
func CIFAR10(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("CIFAR10", "which_sets="+pyTuple(whichSets)), "cifar10.hdf5",
		[]string{"train", "test"}, whichSets, true, opts, transformers.Uint8PixelsToFloatX([]string{"features"}))
}

// CIFAR100 is Fuel's CIFAR100(which_sets): cifar100.hdf5, splits train and
// test; features uint8 (N, 3, 32, 32), coarse_labels and fine_labels
// uint8 (N, 1). Loaded in memory by default; default transformers as
// CIFAR10.
func CIFAR100(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("CIFAR100", "which_sets="+pyTuple(whichSets)), "cifar100.hdf5",
		[]string{"train", "test"}, whichSets, true, opts, transformers.Uint8PixelsToFloatX([]string{"features"}))
}

// SVHN is Fuel's SVHN(which_format, which_sets): svhn_format_1.hdf5 (full
// house numbers: variable-length sources) or svhn_format_2.hdf5 (cropped
// digits: features uint8 (N, 3, 32, 32), targets uint8 (N, 1)); splits
// train, test and extra. Read from the file by default (Fuel does not load
// SVHN in memory); default transformers as CIFAR10.
func SVHN(whichFormat int, whichSets []string, opts H5Options) (*FileDataset, error) {
	name := call("SVHN", fmt.Sprintf("which_format=%d", whichFormat), "which_sets="+pyTuple(whichSets))
	if whichFormat != 1 && whichFormat != 2 {
		return nil, fmt.Errorf("datasets: %s: which_format must be 1 or 2", name)
	}
	return openFileDataset(name, fmt.Sprintf("svhn_format_%d.hdf5", whichFormat),
		[]string{"train", "test", "extra"}, whichSets, false, opts, transformers.Uint8PixelsToFloatX([]string{"features"}))
}

// Iris is Fuel's Iris(which_sets): iris.hdf5, split all (150 examples);
// features float32 (N, 4), targets uint8 (N, 1). Loaded in memory by
// default.
func Iris(whichSets []string, opts H5Options) (*FileDataset, error) {
	return openFileDataset(call("Iris", "which_sets="+pyTuple(whichSets)), "iris.hdf5",
		[]string{"all"}, whichSets, true, opts, nil)
}

// CalTech101Silhouettes is Fuel's CalTech101Silhouettes(which_sets,
// size=28): caltech101_silhouettes16.hdf5 or ...28.hdf5, splits train,
// valid and test; features uint8 (N, 1, size, size), targets uint8 (N, 1).
// Loaded in memory by default.
func CalTech101Silhouettes(whichSets []string, size int, opts H5Options) (*FileDataset, error) {
	name := call("CalTech101Silhouettes", "which_sets="+pyTuple(whichSets), fmt.Sprintf("size=%d", size))
	if size != 16 && size != 28 {
		return nil, fmt.Errorf("datasets: %s: size must be 16 or 28", name)
	}
	return openFileDataset(name, fmt.Sprintf("caltech101_silhouettes%d.hdf5", size),
		[]string{"train", "valid", "test"}, whichSets, true, opts, nil)
}
