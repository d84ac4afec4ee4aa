package fuel

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/converters"
	"github.com/blocks-go/blocks/starlib"
)

// Modules fuel.converters.<dataset>: Fuel's converter functions, which
// turn a dataset's distributed files (in directory) into the Fuel HDF5
// file its dataset class reads (written in output_directory) and return
// the tuple of paths written, as Fuel's. The work is fuel/converters'
// (what blocks-repl's fuel-convert runs).
//
// fuel.converters.mnist:
//
//	convert_mnist(directory, output_directory, output_filename=None, dtype=None)
//	read_mnist_images(filename, dtype=None)   (N, 1, rows, cols) uint8; dtype "bool"
//	    (pixel >= 128), "float32" or "float64" (pixel / 255)
//	read_mnist_labels(filename)               (N, 1) uint8
//
// fuel.converters.binarized_mnist: convert_binarized_mnist(directory, output_directory, output_filename="binarized_mnist.hdf5")
// fuel.converters.cifar10: convert_cifar10(directory, output_directory, output_filename="cifar10.hdf5")
// fuel.converters.cifar100: convert_cifar100(directory, output_directory, output_filename="cifar100.hdf5")
// fuel.converters.iris: convert_iris(directory, output_directory, output_filename="iris.hdf5")
// fuel.converters.svhn: convert_svhn(which_format, directory, output_directory, output_filename=None)
// fuel.converters.caltech101_silhouettes: convert_silhouettes(size, directory, output_directory, output_filename=None)
func convertersModules() (mods []*starlarkstruct.Module) {
	conv := func(module, fn, dataset string) {
		mods = append(mods, &starlarkstruct.Module{Name: "fuel.converters." + module, Members: starlark.StringDict{
			fn: starlib.NewBuiltin(fn, convertBuiltin(dataset)),
		}})
	}
	conv("binarized_mnist", "convert_binarized_mnist", "binarized_mnist")
	conv("cifar10", "convert_cifar10", "cifar10")
	conv("cifar100", "convert_cifar100", "cifar100")
	conv("iris", "convert_iris", "iris")
	conv("svhn", "convert_svhn", "svhn")
	conv("caltech101_silhouettes", "convert_silhouettes", "caltech101_silhouettes")
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.converters.mnist", Members: starlark.StringDict{
		"convert_mnist":     starlib.NewBuiltin("convert_mnist", convertBuiltin("mnist")),
		"read_mnist_images": starlib.NewBuiltin("read_mnist_images", readMNISTImages),
		"read_mnist_labels": starlib.NewBuiltin("read_mnist_labels", readMNISTLabels),
	}})
	return
}

// convertBuiltin is fuel.converters.<dataset>.convert_<dataset>.
func convertBuiltin(dataset string) starlib.BuiltinFunc {
	// "celeba/64" is celeba with which_format fixed (convert_celeba_64).
	dataset, fixedFormat, _ := strings.Cut(dataset, "/")
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var opts converters.Options
		var filename, dtype starlark.Value = starlark.None, starlark.None
		var params []any
		switch {
		case dataset == "svhn":
			params = append(params, "which_format", &opts.Format)
		case dataset == "caltech101_silhouettes":
			params = append(params, "size", &opts.Size)
		case dataset == "celeba" && fixedFormat == "":
			params = append(params, "which_format", &opts.WhichFormat)
		}
		if fixedFormat != "" {
			opts.WhichFormat = fixedFormat
		}
		params = append(params, "directory", &opts.Directory, "output_directory", &opts.OutputDirectory, "output_filename?", &filename)
		if dataset == "mnist" {
			params = append(params, "dtype?", &dtype)
		}
		seed := starlark.Value(starlark.None)
		if dataset == "ilsvrc2010" || dataset == "ilsvrc2012" {
			params = append(params, "shuffle_seed?", &seed)
		}
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, params...); err != nil {
			return nil, err
		}
		if filename != starlark.None {
			s, ok := starlark.AsString(filename)
			if !ok {
				return nil, fmt.Errorf("%s: output_filename must be a string or None, got %s", b.Name(), filename.Type())
			}
			opts.OutputFilename = s
		}
		if dtype != starlark.None {
			s, ok := starlark.AsString(dtype)
			if !ok {
				return nil, fmt.Errorf("%s: dtype must be a string or None, got %s", b.Name(), dtype.Type())
			}
			opts.DType = s
		}
		if seed != starlark.None {
			var i64 int64
			if err := starlark.AsInt(seed, &i64); err != nil {
				return nil, fmt.Errorf("%s: shuffle_seed: %s, want an int in [0, 2**32)", b.Name(), seed)
			}
			i := int(i64)
			opts.ShuffleSeed = &i
		} else if dataset == "ilsvrc2010" || dataset == "ilsvrc2012" {
			// Fuel's default, config.default_seed (the run's, when assigned).
			opts.ShuffleSeed = fuelDefaultSeed(thread)
		}
		switch {
		case dataset == "svhn" && opts.Format != 1 && opts.Format != 2:
			return nil, fmt.Errorf("%s: which_format must be 1 or 2, got %d", b.Name(), opts.Format)
		case dataset == "celeba" && opts.WhichFormat != "aligned_cropped" && opts.WhichFormat != "64":
			return nil, fmt.Errorf("%s: CelebA format needs to be either 'aligned_cropped' or '64', got %q", b.Name(), opts.WhichFormat)
		case dataset == "caltech101_silhouettes" && opts.Size != 16 && opts.Size != 28:
			return nil, fmt.Errorf("%s: size must be 16 or 28, got %d", b.Name(), opts.Size)
		}
		if err := starlib.CheckRead(thread, opts.Directory); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		// The sandbox checks (or redirects) the file it will write.
		name := opts.OutputFilename
		if name == "" {
			name = converters.DefaultFilename(dataset, opts)
		}
		out, err := starlib.WritePath(thread, filepath.Join(opts.OutputDirectory, name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		opts.OutputDirectory, opts.OutputFilename = filepath.Dir(out), filepath.Base(out)
		opts.Command = fmt.Sprintf("%s(%s)", b.Name(), strings.Trim(fmt.Sprint(append(starlark.Tuple{}, args...)), "()"))
		path, err := converters.Convert(dataset, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		return starlark.Tuple{starlark.String(path)}, nil
	}
}

func readMNISTImages(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var dtype starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "filename", &path, "dtype?", &dtype); err != nil {
		return nil, err
	}
	dt := ""
	if dtype != starlark.None {
		s, ok := starlark.AsString(dtype)
		if !ok {
			return nil, fmt.Errorf("%s: dtype must be a string or None, got %s", b.Name(), dtype.Type())
		}
		dt = s
	}
	if err := starlib.CheckRead(thread, path); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	a, err := converters.ReadMNISTImages(path, dt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return &starlib.Array{A: a}, nil
}

// readablePathArg unpacks the one argument param of builtin b, a path the
// script may read (starlib.CheckRead).
func readablePathArg(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, param string) (string, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, param, &path); err != nil {
		return "", err
	}
	if err := starlib.CheckRead(thread, path); err != nil {
		return "", fmt.Errorf("%s: %w", b.Name(), err)
	}
	return path, nil
}

func readMNISTLabels(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	path, err := readablePathArg(thread, b, args, kwargs, "filename")
	if err != nil {
		return nil, err
	}
	a, err := converters.ReadMNISTLabels(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return &starlib.Array{A: a}, nil
}
