// Package converters is Fuel's fuel.converters: it turns the files a
// dataset is distributed as into the HDF5 file Fuel's dataset classes
// read (see fuel/h5), writing what Python's fuel-convert writes: the same
// sources, dtypes, shapes, axis labels and splits, and the root attributes
// h5py_interface_version, fuel_convert_version and fuel_convert_command.
//
//	path, err := converters.Convert("mnist", converters.Options{Directory: in, OutputDirectory: out, Command: "..."})
//
// Converters here: mnist (idx files, gzipped or plain), binarized_mnist
// (the three .amat text files), iris (iris.data), cifar10 and cifar100
// (the Python pickles in cifar-1*-python.tar.gz, read by a small unpickler
// that only knows numpy arrays, lists, dicts and strings), svhn format 2
// and caltech101_silhouettes (level 5 MAT-files, read by a small reader),
// svhn format 1 (tar.gz archives of PNGs and a MATLAB 7.3 digitStruct.mat,
// read through libhdf5), adult (the UCI text files), celeba and
// dogs_vs_cats (zip archives of JPEGs), ilsvrc2010 and ilsvrc2012 (the
// development kit, through ParseMat, a MAT-file reader of struct and cell
// arrays, and TARs of JPEGs; their parts are exported as Fuel's:
// ExtractPatchImages, LoadFromTarOrPatch, PrepareILSVRC2010File,
// PrepareILSVRC2012File, ProcessTrainSet, ProcessOtherSet,
// ReadILSVRCMetadataMat, ReadILSVRCDevkit and the Prepare*Metadata
// functions). Fuel's youtube_audio is not implemented, and Convert names
// it as such.
//
// Every output is written under a temporary name and renamed into place,
// so a failed conversion leaves nothing that looks like a dataset.
package converters

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/blocks-go/blocks/fuel/h5"
)

// Versions fuel-convert writes into every file.
const (
	// H5PYInterfaceVersion is H5PYDataset.interface_version.
	H5PYInterfaceVersion = "0.3"
	// FuelConvertVersion is fuel.converters.__version__.
	FuelConvertVersion = "0.2"
)

// Options are fuel-convert's arguments common to every converter.
type Options struct {
	// Directory holds the input files (-d; default: the working
	// directory).
	Directory string
	// OutputDirectory is where the file is written (-o; default: the
	// working directory). It must exist.
	OutputDirectory string
	// OutputFilename overrides the converter's file name.
	OutputFilename string
	// DType is mnist's --dtype: "" (uint8), "float32", "float64" or "bool".
	DType string
	// Format is svhn's which_format (1 or 2).
	Format int
	// Size is caltech101_silhouettes' size (16 or 28).
	Size int
	// WhichFormat is celeba's which_format ("aligned_cropped" or "64").
	WhichFormat string
	// ShuffleSeed is ilsvrc2010's and ilsvrc2012's shuffle_seed: the seed
	// of numpy's RandomState whose permutation orders the training set on
	// disk; nil is Fuel's default, config.default_seed.
	ShuffleSeed *int
	// Command is stored as fuel_convert_command (Fuel stores the command
	// line that ran it).
	Command string
}

// MissingInputFilesError is Fuel's MissingInputFiles: the files a
// converter needs that are not in the input directory.
type MissingInputFilesError struct {
	Dataset   string
	Directory string
	Files     []string
}

func (e *MissingInputFilesError) Error() string {
	return fmt.Sprintf("converting %s: the following required files were not found in %s: %s (did you forget to run fuel download?)",
		e.Dataset, e.Directory, strings.Join(e.Files, ", "))
}

// converter converts one dataset: it fills the writer and returns the
// default output file name.
type converter struct {
	filename string
	fill     func(w *h5.Writer, opts Options) error
	// defaultName may depend on the options (mnist's dtype).
	name func(opts Options) string
}

var registry = map[string]converter{
	"mnist":           {fill: fillMNIST, name: mnistFilename},
	"binarized_mnist": {filename: "binarized_mnist.hdf5", fill: fillBinarizedMNIST},
	"iris":            {filename: "iris.hdf5", fill: fillIris},
	"adult":           {filename: "adult.hdf5", fill: fillAdult},
	"celeba": {fill: fillCelebA, name: func(o Options) string {
		return "celeba_" + o.WhichFormat + ".hdf5"
	}},
	"cifar10":      {filename: "cifar10.hdf5", fill: fillCIFAR10},
	"cifar100":     {filename: "cifar100.hdf5", fill: fillCIFAR100},
	"dogs_vs_cats": {filename: "dogs_vs_cats.hdf5", fill: fillDogsVsCats},
	"ilsvrc2010":   {filename: "ilsvrc2010.hdf5", fill: fillILSVRC2010},
	"ilsvrc2012":   {filename: "ilsvrc2012.hdf5", fill: fillILSVRC2012},
	"svhn":         {fill: fillSVHN, name: func(o Options) string { return fmt.Sprintf("svhn_format_%d.hdf5", o.Format) }},
	"caltech101_silhouettes": {fill: fillSilhouettes, name: func(o Options) string {
		return fmt.Sprintf("caltech101_silhouettes%d.hdf5", o.Size)
	}},
}

// notImplemented are Fuel's converters this package does not have.
var notImplemented = []string{"youtube_audio"}

// Names lists the datasets Convert knows.
func Names() []string {
	var out []string
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ErrNotImplemented is wrapped by the error for a Fuel converter this
// package does not have.
var ErrNotImplemented = errors.New("converter not implemented")

// Convert converts dataset and returns the path of the file written.
func Convert(dataset string, opts Options) (string, error) {
	c, ok := registry[dataset]
	if !ok {
		if slices.Contains(notImplemented, dataset) {
			return "", fmt.Errorf("converters: %s: %w here (available: %s)", dataset, ErrNotImplemented, strings.Join(Names(), ", "))
		}
		return "", fmt.Errorf("converters: unknown dataset %q (available: %s)", dataset, strings.Join(Names(), ", "))
	}
	if opts.Directory == "" {
		opts.Directory = "."
	}
	if opts.OutputDirectory == "" {
		opts.OutputDirectory = "."
	}
	if st, err := os.Stat(opts.OutputDirectory); err != nil || !st.IsDir() {
		return "", fmt.Errorf("converters: %s is not an existing directory", opts.OutputDirectory)
	}
	name := opts.OutputFilename
	if name == "" {
		name = DefaultFilename(dataset, opts)
	}
	out := filepath.Join(opts.OutputDirectory, name)
	w, err := h5.Create(out)
	if err != nil {
		return "", fmt.Errorf("converters: %s: %w", dataset, err)
	}
	if err := c.fill(w, opts); err != nil {
		w.Abort()
		var missing *MissingInputFilesError
		if errors.As(err, &missing) {
			return "", err
		}
		return "", fmt.Errorf("converters: %s: %w", dataset, err)
	}
	for _, a := range [][2]string{
		{"h5py_interface_version", H5PYInterfaceVersion},
		{"fuel_convert_version", FuelConvertVersion},
		{"fuel_convert_command", opts.Command},
	} {
		if err := w.SetAttribute(a[0], a[1]); err != nil {
			w.Abort()
			return "", err
		}
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("converters: %s: %w", dataset, err)
	}
	return out, nil
}

// DefaultFilename is the file name Convert writes for dataset when
// opts.OutputFilename is empty (Fuel's default output_filename), "" for a
// dataset it does not know.
func DefaultFilename(dataset string, opts Options) string {
	c, ok := registry[dataset]
	if !ok {
		return ""
	}
	if c.name != nil {
		return c.name(opts)
	}
	return c.filename
}

// findInput returns the path of each named input file in dir; with
// gzipOK, name.gz stands for name. Missing files give a
// MissingInputFilesError naming all of them.
func findInput(dataset, dir string, gzipOK bool, names ...string) ([]string, error) {
	var paths, missing []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
			continue
		}
		if gzipOK {
			if _, err := os.Stat(p + ".gz"); err == nil {
				paths = append(paths, p+".gz")
				continue
			}
		}
		missing = append(missing, n)
	}
	if missing != nil {
		return nil, &MissingInputFilesError{Dataset: dataset, Directory: dir, Files: missing}
	}
	return paths, nil
}
