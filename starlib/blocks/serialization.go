package blocks

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// Module blocks.serialization: Blocks' parameter files, in safe formats
// only (no pickle, no code).
//
//	load_parameters(file_)   the parameters saved in the tar file file_ (a
//	    path): a dict of Blocks' hierarchical names ("/mlp/linear_0.W") to
//	    arrays, read from its _parameters member (a numpy .npz), as Blocks'
//	    load_parameters; a checkpoint written by Checkpoint is such a file
//	dump(object_, file_, parameters=None)   writes the tar file file_ (a
//	    path) with the _parameters member only: parameters (a list of
//	    shared variables), or every parameter of object_ (a brick or a
//	    Model) when parameters is None. Blocks also pickles object_; this
//	    project never writes or reads pickles (see docs/checkpoints.md), so
//	    object_ only says which parameters to write.
//	load(file_)             Blocks' unpickling load: refused with an explanation (load
//	                        is a Starlark keyword: bind it under another name, as in
//	                        load("blocks.serialization", unpickle = "load"))
func serializationModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.serialization", Members: starlark.StringDict{
		"load_parameters": starlib.NewBuiltin("load_parameters", loadParametersBuiltin),
		"dump":            starlib.NewBuiltin("dump", dumpBuiltin),
		"load": starlib.NewBuiltin("load", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return nil, fmt.Errorf("load: Blocks' load unpickles a main loop, which this project never does (a pickle runs code); use load_parameters(file_) for the parameters, or blocks-repl resume for a checkpoint")
		}),
	}})
	return
}

// parametersMember is the tar member Blocks stores parameters in.
const parametersMember = "_parameters"

func loadParametersBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "file_", &path); err != nil {
		return nil, err
	}
	if err := starlib.CheckRead(thread, path); err != nil {
		return nil, fmt.Errorf("load_parameters: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load_parameters: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load_parameters: %v", err)
	}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("load_parameters: %s has no %s member (not a Blocks parameter file)", path, parametersMember)
		}
		if err != nil {
			return nil, fmt.Errorf("load_parameters: reading %s: %v", path, err)
		}
		if h.Name != parametersMember {
			continue
		}
		// A member holds at most the file's bytes; a sparse one (which could
		// declare gigabytes in a few kilobytes) is refused as Decode does.
		for k := range h.PAXRecords {
			if strings.HasPrefix(k, "GNU.sparse.") {
				return nil, fmt.Errorf("load_parameters: %s: the %s member is a sparse file", path, parametersMember)
			}
		}
		if h.Typeflag == tar.TypeGNUSparse || h.Size < 0 || h.Size > st.Size() {
			return nil, fmt.Errorf("load_parameters: %s: the %s member declares %d bytes", path, parametersMember, h.Size)
		}
		data, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return nil, fmt.Errorf("load_parameters: reading %s: %v", path, err)
		}
		arrays, err := checkpoint.DecodeNPZ(data)
		if err != nil {
			return nil, fmt.Errorf("load_parameters: %s: %v", path, err)
		}
		d := starlark.NewDict(len(arrays))
		for _, a := range arrays {
			if err := d.SetKey(starlark.String(strings.ReplaceAll(a.Name, "|", "/")), starlib.FromArray(a.Array)); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
}

func dumpBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var obj, params starlark.Value = starlark.None, starlark.None
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "object_", &obj, "file_", &path, "parameters?", &params); err != nil {
		return nil, err
	}
	var vars []*core.Variable
	switch {
	case params != starlark.None:
		vs, err := variablesOf(thread, "dump: parameters", params)
		if err != nil {
			return nil, err
		}
		vars = vs
	default:
		switch o := obj.(type) {
		case *Brick:
			vars = bricks.AllParameters(o.B)
		case *Model:
			for _, n := range o.M.ParameterNames() {
				vars = append(vars, o.M.Parameter(n))
			}
		default:
			return nil, fmt.Errorf("dump: without parameters, object_ must be a brick or a Model (this project writes parameters only, never a pickle of %s)", obj.Type())
		}
	}
	var named []checkpoint.Named
	for _, v := range vars {
		if !v.IsShared() {
			return nil, fmt.Errorf("dump: %s is not a shared variable", v)
		}
		named = append(named, checkpoint.Named{Name: checkpoint.ParameterKey(bricks.ParameterPath(v)), Array: v.Value()})
	}
	data, err := checkpoint.EncodeNPZ(named)
	if err != nil {
		return nil, fmt.Errorf("dump: %v", err)
	}
	path, err = starlib.WritePath(thread, path)
	if err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: parametersMember, Mode: 0o644, Size: int64(len(data))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dump-*")
	if err != nil {
		return nil, fmt.Errorf("dump: %v", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("dump: %v", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("dump: %v", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("dump: %v", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("dump: %v", err)
	}
	return starlark.None, nil
}
