package fuel

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/datasets/toy"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// More of fuel.datasets, and the modules fuel.datasets.toy and
// fuel.converters.base.
//
// fuel.datasets (Fuel's built-in datasets reading their converted files
// from the data path, FUEL_DATA_PATH or data_path in ~/.fuelrc; every one
// also takes subset=None, load_in_memory=, sort_indices=True, sources=None):
//
//	BinarizedMNIST(which_sets)            binarized_mnist.hdf5: train/valid/test, features uint8 (N, 1, 28, 28)
//	CIFAR10(which_sets)                   cifar10.hdf5: train/test, features uint8 (N, 3, 32, 32), targets uint8 (N, 1)
//	CIFAR100(which_sets)                  cifar100.hdf5: features, coarse_labels, fine_labels
//	SVHN(which_format, which_sets)        svhn_format_1.hdf5 or svhn_format_2.hdf5: train/test/extra
//	Iris(which_sets)                      iris.hdf5: all, features float32 (150, 4), targets uint8 (150, 1)
//	CalTech101Silhouettes(which_sets, size=28)   caltech101_silhouettes{16,28}.hdf5: train/valid/test
//	load_in_memory defaults to True (False for SVHN), as in Fuel; CIFAR10, CIFAR100 and SVHN have
//	Fuel's default transformers (features scaled to [0, 1] in floatX) for DataStream.default_stream.
//	A variable-length source's batch is a list of arrays, one per example.
//
// fuel.datasets.toy:
//
//	Spiral(num_examples=1000, classes=1, cycles=1., noise=0.0, seed=None, sources=None)
//	    sources features (float32 (N, 2)), position (float64 (N,)), label (int64 (N,))
//	SwissRoll(num_examples=1000, noise=0.0, seed=None, sources=None)
//	    sources features (float32 (N, 3)), position (float32 (N, 2))
//	seed defaults to Fuel's default_seed (1; default_seed in ~/.fuelrc); the numbers are numpy's.
//
// fuel.converters.base:
//
//	fill_hdf5_file(path, data, axis_labels=None, attributes=None)
//	    Fuel's fill_hdf5_file, writing a new file at path: data is a list of (split, source,
//	    array[, comment]) tuples; each source is the concatenation of its arrays in order and each
//	    split covers its part of each source. A list of examples of different shapes makes a
//	    variable-length source (its axis_labels: "batch", then one per example axis). axis_labels maps a source to its labels;
//	    attributes (a dict of strings) become root attributes. The file opens in Python h5py and
//	    Fuel as one fuel-convert wrote.
func datasetsModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets", Members: starlark.StringDict{
		"BinarizedMNIST":        starlib.NewBuiltin("BinarizedMNIST", fileDatasetBuiltin),
		"CIFAR10":               starlib.NewBuiltin("CIFAR10", fileDatasetBuiltin),
		"CIFAR100":              starlib.NewBuiltin("CIFAR100", fileDatasetBuiltin),
		"SVHN":                  starlib.NewBuiltin("SVHN", fileDatasetBuiltin),
		"Iris":                  starlib.NewBuiltin("Iris", fileDatasetBuiltin),
		"CalTech101Silhouettes": starlib.NewBuiltin("CalTech101Silhouettes", fileDatasetBuiltin),
		"Adult":                 starlib.NewBuiltin("Adult", fileDatasetBuiltin),
		"CelebA":                starlib.NewBuiltin("CelebA", fileDatasetBuiltin),
		"DogsVsCats":            starlib.NewBuiltin("DogsVsCats", fileDatasetBuiltin),
		"ILSVRC2010":            starlib.NewBuiltin("ILSVRC2010", fileDatasetBuiltin),
		"ILSVRC2012":            starlib.NewBuiltin("ILSVRC2012", fileDatasetBuiltin),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets.imagenet", Members: starlark.StringDict{
		"ILSVRC2010": starlib.NewBuiltin("ILSVRC2010", fileDatasetBuiltin),
		"ILSVRC2012": starlib.NewBuiltin("ILSVRC2012", fileDatasetBuiltin),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.datasets.toy", Members: starlark.StringDict{
		"Spiral":    starlib.NewBuiltin("Spiral", toyBuiltin),
		"SwissRoll": starlib.NewBuiltin("SwissRoll", toyBuiltin),
	}})
	mods = append(mods, &starlarkstruct.Module{Name: "fuel.converters.base", Members: starlark.StringDict{
		"fill_hdf5_file": starlib.NewBuiltin("fill_hdf5_file", fillHDF5File),
	}})
	return
}

// fileDatasetBuiltin makes one of the datasets read from a converted file.
func fileDatasetBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name := b.Name()
	var which, subset, sources, loadInMemory starlark.Value = nil, starlark.None, starlark.None, starlark.None
	sortIndices := true
	format, size := 0, 28
	var strFormat string
	params := []any{}
	switch name {
	case "SVHN":
		params = append(params, "which_format", &format)
	case "CelebA":
		params = append(params, "which_format", &strFormat)
	}
	params = append(params, "which_sets", &which)
	if name == "CalTech101Silhouettes" {
		params = append(params, "size?", &size)
	}
	params = append(params, "subset?", &subset, "load_in_memory?", &loadInMemory, "sort_indices?", &sortIndices, "sources?", &sources)
	if err := starlark.UnpackArgs(name, args, kwargs, params...); err != nil {
		return nil, err
	}
	ws, err := stringList(name+": which_sets", which)
	if err != nil {
		return nil, err
	}
	opts := datasets.H5Options{NoSortIndices: !sortIndices, Settings: FuelSettings(thread)}
	if opts.Sources, err = stringList(name+": sources", sources); err != nil {
		return nil, err
	}
	if loadInMemory != starlark.None {
		b, ok := loadInMemory.(starlark.Bool)
		if !ok {
			return nil, fmt.Errorf("%s: load_in_memory must be a bool, got %s", name, loadInMemory.Type())
		}
		v := bool(b)
		opts.LoadInMemory = &v
	}
	if s, err := subsetArg(subset); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	} else {
		opts.Subset = h5Subset(s)
	}
	var ds *datasets.FileDataset
	switch name {
	case "BinarizedMNIST":
		ds, err = datasets.BinarizedMNIST(ws, opts)
	case "CIFAR10":
		ds, err = datasets.CIFAR10(ws, opts)
	case "CIFAR100":
		ds, err = datasets.CIFAR100(ws, opts)
	case "SVHN":
		ds, err = datasets.SVHN(format, ws, opts)
	case "Iris":
		ds, err = datasets.Iris(ws, opts)
	case "CalTech101Silhouettes":
		ds, err = datasets.CalTech101Silhouettes(ws, size, opts)
	case "Adult":
		ds, err = datasets.Adult(ws, opts)
	case "CelebA":
		ds, err = datasets.CelebA(strFormat, ws, opts)
	case "DogsVsCats":
		ds, err = datasets.DogsVsCats(ws, opts)
	case "ILSVRC2010":
		ds, err = datasets.ILSVRC2010(ws, opts)
	case "ILSVRC2012":
		ds, err = datasets.ILSVRC2012(ws, opts)
	}
	if err != nil {
		return nil, err
	}
	return &Dataset{D: ds, name: name}, nil
}

// toyBuiltin makes Spiral or SwissRoll.
func toyBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seed, sources starlark.Value = starlark.None, starlark.None
	var noise starlark.Value = starlark.Float(0)
	floatArg := func(what string, v starlark.Value) (float64, error) {
		f, ok := starlark.AsFloat(v)
		if !ok {
			return 0, fmt.Errorf("%s: %s must be a number, got %s", b.Name(), what, v.Type())
		}
		return f, nil
	}
	// common converts the arguments both take: noise, seed and sources.
	common := func(noiseOut *float64, seedOut **int, sourcesOut *[]string) error {
		var err error
		if *noiseOut, err = floatArg("noise", noise); err != nil {
			return err
		}
		if seed == starlark.None {
			*seedOut = fuelDefaultSeed(thread)
		} else {
			var s int
			if err := starlark.AsInt(seed, &s); err != nil {
				return fmt.Errorf("%s: seed: %v", b.Name(), err)
			}
			*seedOut = &s
		}
		*sourcesOut, err = stringList(b.Name()+": sources", sources)
		return err
	}
	var ds *datasets.IndexableDataset
	var err error
	if b.Name() == "Spiral" {
		o := toy.DefaultSpiral()
		var cycles starlark.Value = starlark.Float(1)
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "num_examples?", &o.NumExamples, "classes?", &o.Classes,
			"cycles?", &cycles, "noise?", &noise, "seed?", &seed, "sources?", &sources); err != nil {
			return nil, err
		}
		if o.Cycles, err = floatArg("cycles", cycles); err != nil {
			return nil, err
		}
		if err := common(&o.Noise, &o.Seed, &o.Indexable.Sources); err != nil {
			return nil, err
		}
		ds, err = toy.Spiral(o)
	} else {
		o := toy.DefaultSwissRoll()
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "num_examples?", &o.NumExamples, "noise?", &noise,
			"seed?", &seed, "sources?", &sources); err != nil {
			return nil, err
		}
		if err := common(&o.Noise, &o.Seed, &o.Indexable.Sources); err != nil {
			return nil, err
		}
		ds, err = toy.SwissRoll(o)
	}
	if err != nil {
		return nil, err
	}
	return &Dataset{D: ds, name: b.Name()}, nil
}

// fillHDF5File is fuel.converters.base.fill_hdf5_file, writing a new file.
func fillHDF5File(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var data starlark.Iterable
	var labels, attrs starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "data", &data, "axis_labels?", &labels, "attributes?", &attrs); err != nil {
		return nil, err
	}
	path, err := starlib.WritePath(thread, path)
	if err != nil {
		return nil, fmt.Errorf("fill_hdf5_file: %w", err)
	}
	var entries []h5.SplitData
	it := data.Iterate()
	defer it.Done()
	var x starlark.Value
	for k := 0; it.Next(&x); k++ {
		t, ok := x.(starlark.Tuple)
		if !ok || len(t) < 3 || len(t) > 4 {
			return nil, fmt.Errorf("fill_hdf5_file: data[%d]: want a (split, source, array[, comment]) tuple, got %s", k, x.String())
		}
		var e h5.SplitData
		var ok1, ok2 bool
		e.Split, ok1 = starlark.AsString(t[0])
		e.Source, ok2 = starlark.AsString(t[1])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("fill_hdf5_file: data[%d]: split and source must be strings", k)
		}
		a, err := starlib.ToArray(t[2], nil)
		if err != nil {
			// Examples of different shapes: a variable-length source.
			ex, err2 := examplesOf(thread, fmt.Sprintf("fill_hdf5_file: data[%d] (%s, %s)", k, e.Split, e.Source), t[2])
			if err2 != nil {
				return nil, fmt.Errorf("fill_hdf5_file: data[%d] (%s, %s): %v", k, e.Split, e.Source, err)
			}
			e.Examples = ex
		} else {
			if a.DType() == nd.Float64 && !hasFloat64(t[2]) {
				a = a.Astype(starlib.FloatX(thread)) // nested lists of floats are floatX, as elsewhere
			}
			e.Data = a
		}
		if len(t) == 4 {
			if e.Comment, ok = starlark.AsString(t[3]); !ok {
				return nil, fmt.Errorf("fill_hdf5_file: data[%d]: the comment must be a string, got %s", k, t[3].Type())
			}
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("fill_hdf5_file: no data")
	}
	axisLabels := map[string][]string{}
	if labels != starlark.None {
		d, ok := labels.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("fill_hdf5_file: axis_labels must be a dict of source -> labels, got %s", labels.Type())
		}
		for _, kv := range d.Items() {
			src, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("fill_hdf5_file: axis_labels keys must be source names, got %s", kv[0].Type())
			}
			l, err := stringList("fill_hdf5_file: axis_labels["+src+"]", kv[1])
			if err != nil {
				return nil, err
			}
			axisLabels[src] = l
		}
	}
	w, err := h5.Create(path)
	if err != nil {
		return nil, err
	}
	if err := w.Fill(entries, axisLabels); err != nil {
		w.Abort()
		return nil, err
	}
	if attrs != starlark.None {
		d, ok := attrs.(*starlark.Dict)
		if !ok {
			w.Abort()
			return nil, fmt.Errorf("fill_hdf5_file: attributes must be a dict of strings, got %s", attrs.Type())
		}
		for _, kv := range d.Items() {
			k, ok1 := starlark.AsString(kv[0])
			v, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 {
				w.Abort()
				return nil, fmt.Errorf("fill_hdf5_file: attributes must map strings to strings, got %s: %s", kv[0].Type(), kv[1].Type())
			}
			if err := w.SetAttribute(k, v); err != nil {
				w.Abort()
				return nil, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return starlark.None, nil
}
