package fuel

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/converters"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/starlib"
)

// More of fuel.converters.ilsvrc2010, its converter core:
//
//	prepare_hdf5_file(hdf5_file, n_train, n_valid, n_test)
//	    Fuel fills an open h5py.File; here hdf5_file is the output path, and the call returns the
//	    file being written (encoded_images, targets int16 (n, 1), filenames S32 (n, 1); the splits
//	    train, valid, test), which process_train_set and process_other_set take as hdf5_file.
//	    f.close() writes it; after that f["filenames"] (rows of bytes) and f["targets"] (rows of
//	    ints) read it back.
//	process_train_set(hdf5_file, train_archive, patch_archive, n_train, wnid_map, shuffle_seed=None)
//	process_other_set(hdf5_file, which_set, image_archive, patch_archive, groundtruth, offset)
//	    archives are paths (Fuel also takes file objects)

// ilsvrcHDF5File is the file prepare_hdf5_file returns.
type ilsvrcHDF5File struct {
	path, out string
	w         *h5.Writer
	n         int
	closed    bool
}

var (
	_ starlark.HasAttrs = (*ilsvrcHDF5File)(nil)
	_ starlark.Mapping  = (*ilsvrcHDF5File)(nil)
)

func (f *ilsvrcHDF5File) String() string {
	state := "open"
	if f.closed {
		state = "closed"
	}
	return fmt.Sprintf("<ILSVRC2010 HDF5 file %q (%s)>", f.path, state)
}
func (f *ilsvrcHDF5File) Type() string          { return "ilsvrc2010.hdf5_file" }
func (f *ilsvrcHDF5File) Freeze()               {}
func (f *ilsvrcHDF5File) Truth() starlark.Bool  { return true }
func (f *ilsvrcHDF5File) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", f.Type()) }
func (f *ilsvrcHDF5File) AttrNames() []string   { return []string{"close"} }

func (f *ilsvrcHDF5File) Attr(name string) (starlark.Value, error) {
	if name != "close" {
		return nil, nil
	}
	return starlib.NewBuiltin("close", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
			return nil, err
		}
		if f.closed {
			return starlark.None, nil
		}
		f.closed = true
		if err := f.w.Close(); err != nil {
			return nil, fmt.Errorf("close: %w", err)
		}
		return starlark.None, nil
	}), nil
}

// Get reads a source back after close: filenames as rows of bytes (h5py's
// (n, 1) S32 array), targets as rows of ints.
func (f *ilsvrcHDF5File) Get(k starlark.Value) (starlark.Value, bool, error) {
	name, ok := starlark.AsString(k)
	if !ok {
		return nil, false, fmt.Errorf("%s: a source name (string) is needed, got %s", f.Type(), k.Type())
	}
	if !f.closed {
		return nil, false, fmt.Errorf("%s: %q: the file is read back after close()", f.Type(), name)
	}
	switch name {
	case "filenames":
		vals, shape, err := h5.ReadStringSource(f.out, name)
		if err != nil {
			return nil, false, err
		}
		return stringRows(vals, shape), true, nil
	case "targets":
		d, err := h5.Open(f.out, []string{"train", "valid", "test"}, h5.Options{Sources: []string{"targets"}})
		if err != nil {
			return nil, false, err
		}
		defer d.Close()
		data, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
		if err != nil {
			return nil, false, err
		}
		t := data[0].Data.([]int16)
		rows := make([]starlark.Value, len(t))
		for i, v := range t {
			rows[i] = starlark.NewList([]starlark.Value{starlark.MakeInt(int(v))})
		}
		return starlark.NewList(rows), true, nil
	}
	return nil, false, fmt.Errorf("%s: no source %q read back here (filenames, targets)", f.Type(), name)
}

func stringRows(vals []string, shape []int) *starlark.List {
	width := 1
	for _, d := range shape[1:] {
		width *= d
	}
	var rows []starlark.Value
	for i := 0; width > 0 && i+width <= len(vals); i += width {
		row := make([]starlark.Value, width)
		for j := range row {
			row[j] = starlark.Bytes(vals[i+j])
		}
		rows = append(rows, starlark.NewList(row))
	}
	return starlark.NewList(rows)
}

func ilsvrcFileArg(b *starlark.Builtin, v starlark.Value) (*ilsvrcHDF5File, error) {
	f, ok := v.(*ilsvrcHDF5File)
	if !ok {
		return nil, fmt.Errorf("%s: hdf5_file: %s, want the file prepare_hdf5_file returns", b.Name(), v.Type())
	}
	if f.closed {
		return nil, fmt.Errorf("%s: hdf5_file %s is closed", b.Name(), f.path)
	}
	return f, nil
}

func prepareHDF5File(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var nTrain, nValid, nTest int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "hdf5_file", &path, "n_train", &nTrain, "n_valid", &nValid, "n_test", &nTest); err != nil {
		return nil, err
	}
	out, err := starlib.WritePath(thread, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	w, err := h5.Create(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if err := converters.PrepareILSVRC2010File(w, nTrain, nValid, nTest); err != nil {
		w.Abort()
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return &ilsvrcHDF5File{path: path, out: out, w: w, n: nTrain + nValid + nTest}, nil
}

func processTrainSet(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fv starlark.Value
	var train, patch string
	var nTrain int
	var wnid *starlark.Dict
	seed := starlark.Value(starlark.None)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "hdf5_file", &fv, "train_archive", &train, "patch_archive", &patch,
		"n_train", &nTrain, "wnid_map", &wnid, "shuffle_seed?", &seed); err != nil {
		return nil, err
	}
	f, err := ilsvrcFileArg(b, fv)
	if err != nil {
		return nil, err
	}
	wnidMap := map[string]int{}
	for _, kv := range wnid.Items() {
		k, ok := starlark.AsString(kv[0])
		v, err := starlark.AsInt32(kv[1])
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: wnid_map: %s: %s, want WordNet ID (string) -> class index (int)", b.Name(), kv[0].Type(), kv[1].Type())
		}
		wnidMap[k] = v
	}
	var s *uint32
	if seed != starlark.None {
		i, err := starlark.AsInt32(seed)
		if err != nil || i < 0 {
			return nil, fmt.Errorf("%s: shuffle_seed: %s, want None or an int in [0, 2**31)", b.Name(), seed)
		}
		u := uint32(i)
		s = &u
	}
	for _, p := range []string{train, patch} {
		if err := starlib.CheckRead(thread, p); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
	}
	if err := converters.ProcessTrainSet(f.w, train, patch, nTrain, wnidMap, s); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.None, nil
}

func processOtherSet(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fv, gt starlark.Value
	var whichSet, images, patch string
	var offset int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "hdf5_file", &fv, "which_set", &whichSet, "image_archive", &images,
		"patch_archive", &patch, "groundtruth", &gt, "offset", &offset); err != nil {
		return nil, err
	}
	f, err := ilsvrcFileArg(b, fv)
	if err != nil {
		return nil, err
	}
	iter, ok := gt.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s: groundtruth: %s, want a list of class indices", b.Name(), gt.Type())
	}
	var groundtruth []int
	it := iter.Iterate()
	defer it.Done()
	var x starlark.Value
	for it.Next(&x) {
		v, err := starlark.AsInt32(x)
		if err != nil {
			return nil, fmt.Errorf("%s: groundtruth: %s, want class indices (ints)", b.Name(), x)
		}
		groundtruth = append(groundtruth, v)
	}
	for _, p := range []string{images, patch} {
		if err := starlib.CheckRead(thread, p); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
	}
	if err := converters.ProcessOtherSet(f.w, whichSet, images, patch, groundtruth, offset); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.None, nil
}
