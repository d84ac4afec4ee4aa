package blocks

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/extensions"
)

// Blocks' classes as data. Each brick class, step rule and extension is
// one classTable: its module and name, its constructor's parameters in
// Blocks' positional order with Blocks' defaults and what each accepts,
// and the Go constructor the Starlark face calls. One binder (bindClass)
// reads a call's arguments against the table, with Python's rules and
// Blocks' errors, so that the signatures are data: :help prints them and
// TestClassTablesMatchBlocks checks them against Blocks' own (the
// inventory in internal/fixtures/data/api/blocks-api.json).

// classTable is one Blocks class.
type classTable struct {
	Module string // the module that exports it: "blocks.algorithms"
	Name   string // the class name: "Adam"
	Doc    string // one line on what it is
	// Params are the constructor's parameters: first those Blocks'
	// __init__ takes by position, in its order, then the keyword-only
	// ones it takes through **kwargs from its base classes (Keyword set).
	Params []classParam
	// Triggers: the class takes SimpleExtension's trigger keywords
	// (after_batch=True, every_n_epochs=2, ...) through **kwargs.
	Triggers bool
	// New makes the value from the bound arguments.
	New func(c *classCall) (starlark.Value, error)
	// brick is set for a brick class's table (registerClasses).
	brick bool
}

// classParam is one constructor parameter.
type classParam struct {
	Name string
	// Default is Blocks' default as Python source text ("0.002", "None",
	// "'valid'", "(1, 1)", "min"); "" for a required parameter.
	Default string
	// Lazy marks a parameter Blocks' signature requires but its @lazy
	// decorator lets a script leave unset (set later, or pushed by a
	// parent at allocation): it then reads NoneAllocation.
	Lazy bool
	// Keyword marks a keyword-only parameter (Blocks' **kwargs, taken by
	// a base class: name, weights_init, ...).
	Keyword bool
	// Kind is what the parameter accepts; None is always accepted where
	// the default is None or the parameter is lazy.
	Kind argKind
	// Stored is, as Python source text, what Blocks' __init__ stores in
	// the brick attribute of this name when the call leaves the argument
	// out, where that is not Default (Pooling's input_dim: None becomes
	// "(None, None, None)"; BatchNormalization's scale_init: "Constant(1)",
	// Constant being the only name beside the defaults'); "" when it
	// stores the default.
	Stored string
}

// argKind is what a constructor parameter accepts.
type argKind int

const (
	argAny       argKind = iota // anything (the constructor or a brick attribute checks it)
	argFloat                    // a number
	argInt                      // an int
	argBool                     // True or False
	argString                   // a string
	argStepRule                 // a step rule
	argExtension                // an extension
	argCallable                 // a function
	argVariable                 // a symbolic variable
	argList                     // a list or tuple
	argScheme                   // an initialization scheme
)

var argKindText = map[argKind]string{
	argFloat: "a number", argInt: "an int", argBool: "a bool", argString: "a string",
	argStepRule: "a step rule", argExtension: "an extension", argCallable: "a function",
	argVariable: "a variable", argList: "a list", argScheme: "an initialization scheme",
}

// accepts reports whether v is of kind k.
func (k argKind) accepts(v starlark.Value) bool {
	switch k {
	case argFloat:
		_, ok := starlark.AsFloat(v)
		return ok
	case argInt:
		_, ok := v.(starlark.Int)
		return ok
	case argBool:
		_, ok := v.(starlark.Bool)
		return ok
	case argString:
		_, ok := starlark.AsString(v)
		return ok
	case argStepRule:
		_, ok := v.(*StepRule)
		return ok
	case argExtension:
		_, ok := v.(*Extension)
		return ok
	case argCallable:
		_, ok := v.(starlark.Callable)
		return ok
	case argVariable:
		_, ok := v.(*starlib.Variable)
		return ok
	case argList:
		_, ok := starlib.Elems(v)
		return ok
	case argScheme:
		_, ok := v.(*Scheme)
		return ok
	}
	return true
}

// classTables holds every table by its qualified name (module.Name).
var classTables = map[string]*classTable{}

// defaultEnv names what Blocks' defaults refer to beyond literals.
var defaultEnv = starlark.StringDict{
	"DEFAULT_LOG_RECORD": starlark.String("timestamp"), // blocks.extensions.Timestamp
}

// registerClasses adds each table to the index and returns its
// constructors as module members: a BrickClass for bricks (when brick is
// true), a builtin otherwise. It panics on a malformed table, a
// programming error found by any test run.
func registerClasses(brick bool, tables ...*classTable) starlark.StringDict {
	out := starlark.StringDict{}
	for _, t := range tables {
		key := t.Module + "." + t.Name
		if _, dup := classTables[key]; dup {
			panic("starlib: class table " + key + " defined twice")
		}
		for i := range t.Params {
			if _, err := t.Params[i].defaultValue(); err != nil {
				panic(fmt.Sprintf("starlib: class table %s: %v", key, err))
			}
			if _, err := t.Params[i].storedValue(); err != nil {
				panic(fmt.Sprintf("starlib: class table %s: %v", key, err))
			}
		}
		classTables[key] = t
		t.brick = brick
		if brick {
			out[t.Name] = &BrickClass{Class: t.Name, table: t}
		} else {
			t := t
			out[t.Name] = starlib.NewBuiltin(t.Name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
				return t.call(thread, args, kwargs)
			})
		}
	}
	return out
}

// defaultValue is the parameter's default as a Starlark value: nil for a
// required or lazy parameter.
func (p *classParam) defaultValue() (starlark.Value, error) {
	if p.Default == "" {
		return nil, nil
	}
	v, err := starlark.Eval(&starlark.Thread{Name: "default"}, p.Name, p.Default, defaultEnv)
	if err != nil {
		return nil, fmt.Errorf("default of %s (%s): %v", p.Name, p.Default, err)
	}
	return v, nil
}

// call binds the arguments and makes the value.
func (t *classTable) call(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	c, err := t.bind(thread, args, kwargs)
	if err != nil {
		return nil, err
	}
	v, err := t.New(c)
	if err != nil || c.extName == "" {
		return v, err
	}
	// An extension's name= (TrainingExtension's, Blocks' **kwargs).
	if e, ok := v.(*Extension); ok {
		if r, ok := e.E.(interface{ SetName(string) }); ok {
			r.SetName(c.extName)
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s got an unexpected keyword argument name", t.Name)
}

// positional is the number of parameters taken by position.
func (t *classTable) positional() int {
	n := 0
	for _, p := range t.Params {
		if !p.Keyword {
			n++
		}
	}
	return n
}

func (t *classTable) param(name string) *classParam {
	for i := range t.Params {
		if t.Params[i].Name == name {
			return &t.Params[i]
		}
	}
	return nil
}

// bind reads a call's arguments against the table, as Python binds them
// to Blocks' __init__: positional ones in order, keywords by name; an
// unknown keyword, a second value for one parameter, too many positional
// arguments or a missing required one is an error naming the class.
func (t *classTable) bind(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (*classCall, error) {
	c := &classCall{thread: thread, table: t, given: map[string]starlark.Value{}}
	if t.Triggers {
		tr, rest, err := splitTriggers(t.Name, kwargs)
		if err != nil {
			return nil, err
		}
		c.Triggers, kwargs = tr, rest
		if t.param("name") == nil {
			if c.extName, kwargs, err = splitName(t.Name, kwargs); err != nil {
				return nil, err
			}
		}
	}
	if n := t.positional(); len(args) > n {
		var names []string
		for _, p := range t.Params[:n] {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("%s takes at most %d positional arguments (%s), got %d", t.Name, n, strings.Join(names, ", "), len(args))
	}
	for i, a := range args {
		c.given[t.Params[i].Name] = a
	}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		if t.param(k) == nil {
			var names []string
			for _, p := range t.Params {
				names = append(names, p.Name)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("%s got an unexpected keyword argument %s (it takes %s)", t.Name, k, strings.Join(names, ", "))
		}
		if _, dup := c.given[k]; dup {
			return nil, fmt.Errorf("%s got multiple values for argument %s", t.Name, k)
		}
		c.given[k] = kv[1]
	}
	for _, p := range t.Params {
		v, ok := c.given[p.Name]
		if !ok {
			if p.Default == "" && !p.Lazy {
				return nil, fmt.Errorf("%s: missing argument for %s", t.Name, p.Name)
			}
			continue
		}
		if isLazyNone(v) && (p.Lazy || p.Default == "None") {
			continue
		}
		if !p.Kind.accepts(v) {
			return nil, fmt.Errorf("%s: for parameter %s: got %s, want %s", t.Name, p.Name, v.Type(), argKindText[p.Kind])
		}
		if p.Kind == argInt {
			// Int reads it as a Go int: one beyond 64 bits would read as 0.
			if _, ok := v.(starlark.Int).Int64(); !ok {
				return nil, fmt.Errorf("%s: for parameter %s: %s is out of range (an int from %d to %d)", t.Name, p.Name, v, math.MinInt64, math.MaxInt64)
			}
		}
	}
	return c, nil
}

// classCall is one call's bound arguments.
type classCall struct {
	thread *starlark.Thread
	table  *classTable
	given  map[string]starlark.Value // the arguments the call gave, by name
	taken  map[string]bool           // the parameters the constructor read (Take)
	// Triggers are the trigger keywords of an extension.
	Triggers extensions.Triggers
	// extName is an extension's name= ("" when not given or None).
	extName string
}

// Given reports whether the call gave the parameter (None included).
func (c *classCall) Given(name string) bool {
	_, ok := c.given[name]
	return ok
}

// Value is the parameter's value: the given one, or the default (nil for
// an unset lazy parameter).
func (c *classCall) Value(name string) starlark.Value {
	if v, ok := c.given[name]; ok {
		return v
	}
	p := c.table.param(name)
	if p == nil {
		panic("starlib: " + c.table.Name + " has no parameter " + name)
	}
	v, _ := p.defaultValue()
	return v
}

// Take is Value, and marks the parameter as read by the constructor
// (a brick's other given arguments are set as its attributes).
func (c *classCall) Take(name string) starlark.Value {
	if c.taken == nil {
		c.taken = map[string]bool{}
	}
	c.taken[name] = true
	return c.Value(name)
}

// IsNone reports whether the parameter is None (or unset).
func (c *classCall) IsNone(name string) bool {
	v := c.Value(name)
	return v == nil || isLazyNone(v)
}

// Float is a number parameter (checked by bind). Float, Int, String
// and Bool mark the parameter as read (Take).
func (c *classCall) Float(name string) float64 {
	f, _ := starlark.AsFloat(c.Take(name))
	return f
}

// Int is an int parameter (checked by bind); 0 when None.
func (c *classCall) Int(name string) int {
	var n int
	if v := c.Take(name); !c.IsNone(name) {
		_ = starlark.AsInt(v, &n)
	}
	return n
}

// String is a string parameter (checked by bind); "" when None.
func (c *classCall) String(name string) string {
	s, _ := starlark.AsString(c.Take(name))
	return s
}

// Bool is a bool parameter.
func (c *classCall) Bool(name string) bool {
	v := c.Take(name)
	return v != nil && bool(v.Truth())
}

// Signature is the class's signature as Blocks writes it: the positional
// parameters with their defaults, then **kwargs when it takes keywords
// through its base classes.
func (t *classTable) Signature() string {
	var parts []string
	kw := t.Triggers
	for _, p := range t.Params {
		if p.Keyword {
			kw = true
			continue
		}
		parts = append(parts, p.text())
	}
	if kw {
		parts = append(parts, "**kwargs")
	}
	return t.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Keywords describes what **kwargs takes: the keyword-only parameters,
// and the triggers of an extension. It is empty when there are none.
func (t *classTable) Keywords() string {
	var parts []string
	for _, p := range t.Params {
		if p.Keyword {
			parts = append(parts, p.text())
		}
	}
	if t.Triggers {
		if t.param("name") == nil {
			parts = append(parts, "name=None")
		}
		parts = append(parts, "the triggers ("+strings.Join(triggerNames, ", ")+")")
	}
	return strings.Join(parts, ", ")
}

func (p classParam) text() string {
	if p.Default == "" {
		return p.Name
	}
	return p.Name + "=" + p.Default
}

// ClassSignature returns the signature of a Blocks class made from a
// table (name is the class name, or qualified by its module) and what
// its **kwargs take; ok is false when no table has the name. Several
// classes of one name (blocks.bricks.Identity and
// blocks.initialization.Identity) give one line each.
func ClassSignature(name string) (lines []string, ok bool) {
	modules() // the tables fill when the modules are built
	var keys []string
	for k, t := range classTables {
		if k == name || t.Name == name {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		t := classTables[k]
		line := t.Module + "." + t.Signature()
		if kw := t.Keywords(); kw != "" {
			line += "\n    **kwargs: " + kw
		}
		lines = append(lines, line)
	}
	return lines, len(lines) > 0
}

// classTableDepartures are the parameters (module.Class.param, or
// module.Class for the whole signature) where a table departs from
// Blocks' signature, each with its reason; docs/reference.md's
// "Departures from Blocks' signatures" explains each one to users, and
// TestClassTablesMatchBlocks checks that the list is exact.
var classTableDepartures = map[string]string{
	"blocks.bricks.BatchNormalization.seed":            "kept: sets the seed of the brick's generator, as on every other brick",
	"blocks.bricks.SpatialBatchNormalization.seed":     "kept: sets the seed of the brick's generator, as on every other brick",
	"blocks.bricks.BatchNormalizedMLP.conserve_memory": "as Blocks: its own `__init__` pops it from `**kwargs`",
	"blocks.bricks.BatchNormalizedMLP.mean_only":       "as Blocks: its own `__init__` pops it from `**kwargs`",
	"blocks.bricks.BatchNormalizedMLP.learn_scale":     "as Blocks: its own `__init__` pops it from `**kwargs`",
	"blocks.bricks.BatchNormalizedMLP.learn_shift":     "as Blocks: its own `__init__` pops it from `**kwargs`",
	"blocks.bricks.BatchNormalizedMLP.use_bias":        "as Blocks: its own `__init__` sets use_bias=False in `**kwargs`",
	"blocks.extensions.SimpleExtension":                "a script's extension: do (a function) stands for the do method of a Python subclass, name for its name",
	"blocks.extensions.Printing.one_line":              "the project's addition: one line per epoch instead of Blocks' blocks",
	"blocks.extensions.ProgressBar":                    "accepts the trigger keywords and ignores them (the bar follows every batch and epoch); Blocks' ProgressBar takes none",
	"blocks.extensions.monitoring.MonitoringExtension": "a SimpleExtension taking the trigger keywords, so that a script can run it; Blocks' is a TrainingExtension",
	"blocks.extensions.saveload.Checkpoint.keep_last":  "the project's addition: how many checkpoints to keep (docs/checkpoints.md)",
	"blocks.bricks.parallel.Parallel.prototype":        "optional: a Linear by default, as for Fork, Distribute and Merge; Blocks' Parallel requires one",
	"blocks.bricks.cost.MisclassificationRate.name":    "the project takes name= as on every other brick; Blocks' takes top_k only",
}
