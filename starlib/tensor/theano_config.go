package tensor

import (
	"fmt"
	"slices"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// theanoConfigModules adds config to the module theano:
//
//	config.floatX       the run's floatX (FUEL_FLOATX or .fuelrc, float32
//	                    by default); setting it to the run's own value is
//	                    accepted, another value is an error (the run's floatX
//	                    is fixed before the script runs)
//	config.device, mode, optimizer, recursion_limit, ... Theano's other
//	                    settings: each reads Theano's default and may be set;
//	                    a setting is accepted and ignored, as none has a
//	                    meaning here (the graph is always compiled the same
//	                    way, on the run's device: blocks.config.device)
//	config.scan, config.gpuarray, ... Theano's sections of settings
//	                    (config.scan.allow_gc = False), accepted and ignored
//	                    alike
//
// Reading a setting Theano does not have, and the script never set, is an
// error, as in Python.
func theanoConfigModules() []*starlarkstruct.Module {
	return []*starlarkstruct.Module{{Name: "theano", Members: starlark.StringDict{
		"config": &starlib.Dynamic{Name: "config", Get: func(thread *starlark.Thread) starlark.Value {
			return newTheanoConfig(thread, "theano.config")
		}},
	}}}
}

// theanoSettings are Theano's top-level settings and their defaults (Theano
// 0.9's): what theano.config.NAME reads until the script sets it.
var theanoSettings = map[string]starlark.Value{
	"device":                        starlark.String("cpu"),
	"init_gpu_device":               starlark.String(""),
	"force_device":                  starlark.False,
	"mode":                          starlark.String("Mode"),
	"optimizer":                     starlark.String("fast_run"),
	"optimizer_including":           starlark.String(""),
	"optimizer_excluding":           starlark.String(""),
	"optimizer_verbose":             starlark.False,
	"linker":                        starlark.String("cvm"),
	"allow_gc":                      starlark.True,
	"exception_verbosity":           starlark.String("low"),
	"compute_test_value":            starlark.String("off"),
	"on_unused_input":               starlark.String("raise"),
	"on_opt_error":                  starlark.String("warn"),
	"profile":                       starlark.False,
	"profile_memory":                starlark.False,
	"warn_float64":                  starlark.String("ignore"),
	"cast_policy":                   starlark.String("custom"),
	"int_division":                  starlark.String("int"),
	"openmp":                        starlark.False,
	"openmp_elemwise_minsize":       starlark.MakeInt(200000),
	"allow_output_prealloc":         starlark.True,
	"print_active_device":           starlark.True,
	"reoptimize_unpickled_function": starlark.False,
	"unpickle_function":             starlark.True,
	"compiledir":                    starlark.String(""),
	"base_compiledir":               starlark.String(""),
	"cxx":                           starlark.String(""),
	"floatX":                        nil, // the run's: read from the thread
	// Not Theano's: Python's recursion limit, which Blocks' scripts raise
	// (sys.setrecursionlimit, blocks.config.recursion_limit) for deep
	// graphs; this project's graphs are not walked recursively in Python.
	"recursion_limit": starlark.MakeInt(10000),
}

// theanoSections are Theano's groups of settings (theano.config.scan.allow_gc).
var theanoSections = []string{"blas", "cmodule", "compile", "cuda", "dnn", "gcc",
	"gpuarray", "lib", "nvcc", "scan", "tensor", "traceback", "numpy", "DebugMode",
	"NanGuardMode", "ProfileMode", "profiling", "optdb", "metaopt", "magma", "warn"}

// theanoConfig is theano.config (or one of its sections) for one run: the
// settings the script set, over Theano's defaults. Every setting but
// floatX is accepted and ignored.
type theanoConfig struct {
	thread   *starlark.Thread
	name     string // "theano.config" or "theano.config.scan"
	set      map[string]starlark.Value
	sections map[string]*theanoConfig
}

var _ starlark.HasSetField = (*theanoConfig)(nil)

func newTheanoConfig(thread *starlark.Thread, name string) *theanoConfig {
	return &theanoConfig{thread: thread, name: name, set: map[string]starlark.Value{}, sections: map[string]*theanoConfig{}}
}

func (c *theanoConfig) String() string        { return "<" + c.name + ">" }
func (c *theanoConfig) Type() string          { return "TheanoConfigParser" }
func (c *theanoConfig) Freeze()               {} // settings are ignored: no state to protect
func (c *theanoConfig) Truth() starlark.Bool  { return true }
func (c *theanoConfig) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", c.Type()) }

func (c *theanoConfig) top() bool { return c.name == "theano.config" }

// AttrNames lists the settings (and, at the top, the sections).
func (c *theanoConfig) AttrNames() []string {
	seen := map[string]bool{}
	for k := range c.set {
		seen[k] = true
	}
	if c.top() {
		for k := range theanoSettings {
			seen[k] = true
		}
		for _, s := range theanoSections {
			seen[s] = true
		}
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Attr reads a setting: the script's value, else Theano's default.
func (c *theanoConfig) Attr(name string) (starlark.Value, error) {
	if v, ok := c.set[name]; ok {
		return v, nil
	}
	if !c.top() {
		return nil, nil
	}
	if name == "floatX" {
		return starlark.String(starlib.FloatX(c.thread).String()), nil
	}
	if v, ok := theanoSettings[name]; ok {
		return v, nil
	}
	if slices.Contains(theanoSections, name) {
		sec, ok := c.sections[name]
		if !ok {
			sec = newTheanoConfig(c.thread, c.name+"."+name)
			c.sections[name] = sec
		}
		return sec, nil
	}
	return nil, nil
}

// SetField records a setting, which has no effect; floatX must be the
// run's own.
func (c *theanoConfig) SetField(name string, v starlark.Value) error {
	if c.top() && name == "floatX" {
		s, ok := starlark.AsString(v)
		if !ok {
			return fmt.Errorf("theano.config.floatX: want 'float32' or 'float64', got %s", v.Type())
		}
		fx := starlib.FloatX(c.thread)
		dt, err := nd.ParseDType(s)
		if err != nil || !dt.IsFloat() {
			return fmt.Errorf("theano.config.floatX: want 'float32' or 'float64', got %q", s)
		}
		if dt != fx {
			return fmt.Errorf("theano.config.floatX = %q: this run's floatX is %s, fixed before the script runs; run with FUEL_FLOATX=%s (or floatX: %s in ~/.fuelrc)", s, fx, s, s)
		}
		return nil
	}
	if c.top() && slices.Contains(theanoSections, name) {
		return fmt.Errorf("%s.%s is a section of settings; set one of its settings (%s.%s.NAME = value)", c.name, name, c.name, name)
	}
	c.set[name] = v
	return nil
}
