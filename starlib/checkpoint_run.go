package starlib

import (
	"errors"
	"os"
	"path/filepath"

	"go.starlark.net/starlark"
)

// PrintConfig asks a run to print its resolved settings (Options.PrintConfig).
type PrintConfig struct {
	// Printed is set once the settings were printed (a script that
	// reads none prints nothing).
	Printed bool
}

type scriptSource struct {
	path string
	src  []byte
}

// recordScript records the main script (the first file of a run).
func (in *Interp) recordScript(filename string, src []byte) {
	abs, err := filepath.Abs(filename)
	if err != nil {
		abs = filename
	}
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	in.state.scripts = append(in.state.scripts, scriptSource{abs, src})
}

// SetSessionScript makes the source src returns, named path, the main
// script that the checkpoints written from now on store (an interactive
// session's code: the REPL's or a notebook's inputs so far, as :save
// writes them), so that resume and replay re-run the session. The files
// it loads are stored after it, as for a script. src is called when a
// checkpoint is written (on the goroutine that runs the script), not
// before: a session's inputs cost nothing until then.
func (in *Interp) SetSessionScript(path string, src func() []byte) {
	in.state.mu.Lock()
	defer in.state.mu.Unlock()
	in.state.session = &sessionScript{path, src}
}

// sessionScript is SetSessionScript's script.
type sessionScript struct {
	path string
	src  func() []byte
}

// readLoaded reads a file for load(): from Options.Files when set (a
// checkpoint's own files, and nothing else), else from disk.
func (in *Interp) readLoaded(path, abs string) ([]byte, error) {
	if in.opts.Files != nil {
		if src, ok := in.opts.Files[abs]; ok {
			return src, nil
		}
		return nil, &os.PathError{Op: "load", Path: path,
			Err: errors.New("not stored in the checkpoint (a resumed or replayed script loads only the files stored with it)")}
	}
	return os.ReadFile(path)
}

// A RunRecord is what a checkpoint written during a run stores about
// the script (package starlib/run makes the checkpoint's RunInfo of it).
type RunRecord struct {
	// Overrides are Options.Overrides, as given.
	Overrides map[string]string
	// Scripts are the session's code (SetSessionScript), then the main
	// script and the files it loaded, in the order they were read.
	Scripts []ScriptFile
	// Tunables are what config(...) declared, in order, as Go values
	// (nil when the script did not call it).
	Tunables []Tunable
}

// A ScriptFile is a script's path and source.
type ScriptFile struct {
	Path   string
	Source []byte
}

// A Tunable is a declared tunable's name and resolved value: nil, bool,
// int, float64, string, []any, or the value's repr.
type Tunable struct {
	Name  string
	Value any
}

// RunRecordOf is what a checkpoint of thread's run stores about its
// script; false outside a run.
func RunRecordOf(thread *starlark.Thread) (RunRecord, bool) {
	s := state(thread)
	if s == nil {
		return RunRecord{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := RunRecord{Overrides: map[string]string{}}
	for k, v := range s.raw {
		r.Overrides[k] = v
	}
	scripts := s.scripts
	if s.session != nil {
		scripts = append([]scriptSource{{s.session.path, s.session.src()}}, scripts...)
	}
	for _, f := range scripts {
		r.Scripts = append(r.Scripts, ScriptFile{Path: f.path, Source: f.src})
	}
	if s.tunables != nil {
		r.Tunables = make([]Tunable, 0, len(s.tunables.order))
		for _, name := range s.tunables.order {
			v := s.tunables.values[name]
			var n Nesting
			gv, err := starlarkToGo(v, &n)
			if err != nil {
				// config() checked the value; a list changed since
				// then (made to contain itself) is kept as its repr.
				gv = v.String()
			}
			r.Tunables = append(r.Tunables, Tunable{name, gv})
		}
	}
	return r, true
}

// TunableValue is the value of the tunable config(...) declared as name in
// thread's run (false when it declared none such).
func TunableValue(thread *starlark.Thread, name string) (starlark.Value, bool) {
	s := state(thread)
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tunables == nil {
		return nil, false
	}
	v, ok := s.tunables.values[name]
	return v, ok
}

// starlarkToGo converts a tunable's value for the log and the checkpoint
// (an error for a value that contains itself or is nested too deep).
func starlarkToGo(v starlark.Value, n *Nesting) (any, error) {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return int(i), nil
		}
		return x.String(), nil
	case starlark.Float:
		return float64(x), nil
	case *Scalar:
		return starlarkToGo(x.Number(), n)
	case starlark.String:
		return string(x), nil
	case starlark.Indexable:
		if err := n.Enter(v); err != nil {
			return nil, err
		}
		defer n.Leave()
		out := make([]any, x.Len())
		for i := range out {
			var err error
			if out[i], err = starlarkToGo(x.Index(i), n); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v.String(), nil
}
