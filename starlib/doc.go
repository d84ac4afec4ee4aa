// Package starlib is the Starlark runtime of the project: the values
// scripts handle (symbolic variables, arrays, random generators, compiled
// functions, ...), the conversions between them and Go, the Library of
// modules load() resolves, and the machinery that runs a script (the
// dialect, load(), print, floatX, the command line's overrides,
// cancellation, the sandbox, error backtraces).
//
// The modules themselves are packages under this one, one per module
// family, as go.starlark.net's lib/math and lib/json: starlib/numpy
// (numpy, numpy.random), starlib/tensor (tensor, tensor.nnet, theano),
// starlib/json, starlib/fuel (fuel.*) and starlib/blocks (blocks.*). Each exports its
// modules (numpy.Module, numpy.RandomModule, ...), whose doc comments
// list their builtins, and a Modules function returning all of them;
// package starlib/all assembles the standard Library from those lists,
// explicitly. This package knows no module: a run loads only the modules
// of the Library its Options name.
//
// Nothing outside the starlib tree and cmd/ knows Starlark exists: core,
// bricks and fuel are Go libraries, and each module adapts one Python
// module of Theano, Blocks or Fuel, under the same dotted name, with the
// same class names, keyword arguments and defaults.
//
// # Running a script
//
//	globals, err := starlib.ExecFile("exp.star", src, starlib.Options{
//		Library:   all.Library(),                   // the modules load() finds
//		Overrides: map[string]string{"lr": "0.05"}, // --set lr=0.05
//		Stdout:    os.Stdout,                       // print()
//		Context:   ctx,                             // cancels the run
//	})
//	if err != nil {
//		fmt.Fprintln(os.Stderr, starlib.Backtrace(err)) // file:line of each call
//	}
//
// A runtime error is a *starlark.EvalError whose call stack goes through
// load statements into the loaded files; Backtrace prints it (and any
// other error as it is). Interp is the lower level: one thread and one
// load cache, ExecFile for scripts, ExecREPL for the chunks of an
// interactive session, Loaded for the .star files a run read, Cancel.
//
// Scripts are written in FileOptions' dialect: go.starlark.net's Starlark
// with sets, while loops, top-level if/for/while, global reassignment and
// recursion. Besides Starlark's universe they have slice(start, stop,
// step) (Predeclared).
//
// load(NAME, ...) resolves a NAME ending in ".star" as a file relative to
// the directory of the loading script (each file runs once per run; a
// cycle is an error), "stdlib/NAME.star" as a file of the embedded
// Starlark library, and any other NAME as a module of Options.Library.
//
// Host state lives in thread locals, never in package variables:
// FloatX(thread) (Options.FloatX, else Fuel's FUEL_FLOATX or .fuelrc, else
// float32; SetFloatX sets it), Context(thread) and Cancelled(thread) (a
// builtin that runs long, such as a training loop, checks them between
// steps and returns Cancelled's error), and the overrides read by the
// blocks.config module.
//
// # Adding a module
//
// A module lives in the package of its family (starlib/numpy for numpy
// and numpy.random), which imports this one and never another family
// above it (internal/layout's test holds the order: json, numpy, tensor,
// fuel, blocks). One file per Starlark module, named after it, declares
// an exported *starlarkstruct.Module whose doc comment lists its builtins
// with their signatures, in go.starlark.net's lib/math style:
//
//	// Module is the Starlark module numpy: ...
//	//
//	//	array(object, dtype=None) - a new array from ...
//	//	zeros(shape, dtype="float64"), ones(shape, dtype="float64") - ...
//	var Module = &starlarkstruct.Module{Name: "numpy", Members: starlark.StringDict{
//		"array": starlark.NewBuiltin("array", npArray),
//	}}
//
// and the family's Modules function returns it. Several modules may have
// the same name (blocks.bricks is written in a dozen files): NewLibrary
// merges their members and refuses a member defined twice. Parents need
// no module: "blocks" exists as soon as "blocks.bricks" does, and
// exposes its children as attributes (load("blocks", "bricks"), then
// bricks.MLP). A member whose value depends on the run (tensor.floatX) is
// a *Dynamic, resolved for each run's thread when loaded. The loader
// wraps module-level builtins so that a Go panic becomes a Starlark error
// with the script's backtrace; use NewBuiltin (the same wrapper) for the
// methods of your own values.
//
// Every name a script loads is checked against one source, the modules
// of all.Library: starlib/all's TestModuleDocsListMembers fails for a
// member its module docs do not list, and cmd/blocks-repl's
// TestHelpForEveryName for one that no section of docs/ documents (the
// REPL's :help NAME prints those sections: docs/reference.md and the
// area's page). So a new builtin gets a line in its module's doc comment
// and an entry in docs/, with Blocks' or Fuel's signature.
//
// # Writing a builtin
//
// Unpack arguments with starlark.UnpackArgs, marking optional ones with
// "?" ("??" treats None as absent), and the Unpacker types here for the
// recurring kinds of argument:
//
//	func sum(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
//		var x starlark.Value
//		var axis starlib.Axes      // None, an int or a tuple of ints
//		var keepdims bool
//		var dtype starlib.DTypeArg // None, "float32", ..., "floatX"
//		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "axis?", &axis, "keepdims?", &keepdims, "dtype?", &dtype); err != nil {
//			return nil, err
//		}
//		v, err := starlib.AsVariable(thread, x) // a variable, number, array or list
//		if err != nil {
//			return nil, fmt.Errorf("%s: for parameter x: %v", b.Name(), err)
//		}
//		r, err := core.Sum(v, axis.Axes, keepdims, dtype.Get(thread))
//		if err != nil {
//			return nil, fmt.Errorf("%s: %v", b.Name(), err)
//		}
//		return starlib.NewVariable(thread, r), nil // records the script line in r.Trace
//	}
//
// The helpers:
//
//	AsVariable(thread, v), ToVariable(v, floatX)  Starlark value -> *core.Variable
//	NewVariable(thread, v)                        *core.Variable -> Starlark, with SetTrace
//	SetTrace(thread, v)                           v.Trace = the calling script position
//	ToArray(v, dtype), FromArray(a)               Starlark value <-> *nd.Array
//	InputArray(variable, v)                       a value given for an input variable
//	SetSharedValue(variable, v)                   set_value's conversion and checks
//	VariableList(thread, v), Updates(thread, v)   a variable or a list; Theano's updates
//	Axes, Axis, DTypeArg, FloatArg, ShapeArg, SizeArg   Unpackers
//	AsInts(v), ShapeArgs(fname, args), ParseDType(thread, name)
//	Elems(v), Variables(thread, fname, params, vals...)  a list's items; several variables
//	FloatX(thread), Context(thread), Cancelled(thread)
//	NewBuiltin(name, fn)                          starlark.NewBuiltin plus a recover
//
// Errors say what was expected and what was got, prefixed by the
// builtin's name ("sum: axis 2 is out of range for a 2-d variable"); the
// interpreter adds the script position. Never panic across a builtin.
//
// # Values
//
// Variable ("TensorVariable") wraps *core.Variable; Array ("ndarray")
// wraps *nd.Array; Role ("VariableRole") wraps *core.Role; Function is a
// compiled tensor.function; RandomState is numpy's generator (shared by
// numpy.random, the bricks' initialization and Fuel's schemes); SliceValue
// is slice(). Their doc comments list their operators, attributes and
// methods. Value types follow go.starlark.net's conventions: a
// `var _ starlark.HasAttrs = (*T)(nil)` block says what they implement,
// Binary returns (nil, nil) for an operand it does not handle, mutable
// values refuse Hash. Freezing (Starlark freezes a module's globals once
// it has run) only ever forbids Starlark-side changes such as renaming a
// variable: the trainer keeps updating shared values, and set_value works.
//
// Starlark's grammar has no slices inside a multi-axis index (x[:, 0] is
// a syntax error) and resolves x[a:b] against a length, which a symbolic
// variable lacks; so an axis may be indexed with a string or with slice():
// x[":", 0], x["1:3", "::2"], x["1:"], x[slice(1, 3), 0], x["...", -1].
// Arrays also take x[a:b] on their first axis.
//
// # Tests
//
// The tests are package starlib_test, which runs scripts with
// all.Library(). TestScripts runs every testdata/*.star file: chunks separated by lines
// "---", each run on its own, a comment ### "regexp" on the line where a
// chunk must fail, values checked with the test-only assert module
// (load("assert", "assert"); assert.eq, ne, true, fails, close, contains),
// "# option:floatX=float64" and "# option:set NAME=VALUE" lines to set the
// run's options. Files that chunks load go in subdirectories of testdata.
// Add a testdata/<module>.star for each module.
package starlib
