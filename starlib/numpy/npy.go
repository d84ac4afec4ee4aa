package numpy

import (
	"fmt"
	"os"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
	"github.com/blocks-go/blocks/starlib"
)

// npyModules are numpy.save and numpy.load: one array in an .npy file (format 1.0 as
// numpy writes it; formats 1.0 to 3.0 read), as Fuel's documentation uses
// them to stand in for data lying on disk. As numpy.save, a file name
// without the .npy extension gets it. Object and str arrays are refused
// (numpy pickles those).
//
//	save(file, arr)
//	load(file)
func npyModules() []*starlarkstruct.Module {
	return []*starlarkstruct.Module{{Name: "numpy", Members: starlark.StringDict{
		"save": starlib.NewBuiltin("save", npSave),
		"load": starlib.NewBuiltin("load", npLoad),
	}}}
}

func npSave(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var file string
	var arr starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "file", &file, "arr", &arr); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(file, ".npy") {
		file += ".npy"
	}
	a, err := starlib.ToArray(arr, nil)
	if err != nil {
		return nil, fmt.Errorf("save: arr: %v", err)
	}
	if a.DType() == nd.Object || a.DType() == nd.Str {
		return nil, fmt.Errorf("save: arrays of dtype %s are not saved (numpy pickles them)", a.DType())
	}
	path, err := starlib.WritePath(thread, file)
	if err != nil {
		return nil, fmt.Errorf("save: %w", err)
	}
	data, err := npy.Encode(a)
	if err != nil {
		return nil, fmt.Errorf("save: %v", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return nil, fmt.Errorf("save: %w", err)
	}
	return starlark.None, nil
}

func npLoad(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var file string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "file", &file); err != nil {
		return nil, err
	}
	if err := starlib.CheckRead(thread, file); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	a, err := npy.Read(f, uint64(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("load: %s: %v", file, err)
	}
	return starlib.FromArray(a), nil
}
