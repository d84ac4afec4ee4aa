package starlib_test

import (
	"context"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
)

// The global theano is the Library's module: a child module registered
// under it (theano.sandbox.rng_mrg, registered by another package) is an
// attribute of the global, the same value load() gives; the hidden
// operator builtins are no global a user sees.
func TestModuleGlobals(t *testing.T) {
	mark := starlark.String("the generator class")
	lib, err := starlib.NewLibrary(
		&starlarkstruct.Module{Name: "theano", Members: starlark.StringDict{"shared": starlark.String("shared")}},
		&starlarkstruct.Module{Name: "theano.sandbox.rng_mrg", Members: starlark.StringDict{"MRG_RandomStreams": mark}},
	)
	if err != nil {
		t.Fatal(err)
	}
	in, err := starlib.NewInterp(starlib.Options{Library: lib})
	if err != nil {
		t.Fatal(err)
	}
	v, err := in.ExecREPL(context.Background(), "theano.sandbox.rng_mrg.MRG_RandomStreams")
	if err != nil || v != mark {
		t.Fatalf("theano.sandbox.rng_mrg.MRG_RandomStreams = %v, %v; want %v", v, err, mark)
	}
	if _, err := in.ExecREPL(context.Background(), `load("theano.sandbox", "rng_mrg")`); err != nil {
		t.Fatal(err)
	}
	if v, err := in.ExecREPL(context.Background(), "rng_mrg == theano.sandbox.rng_mrg"); err != nil || v != starlark.True {
		t.Errorf("load's rng_mrg == theano.sandbox.rng_mrg: %v, %v", v, err)
	}
	if _, ok := in.Globals["numpy"]; ok {
		t.Errorf("numpy is a global of a run whose Library has no numpy")
	}
	if !starlib.HiddenGlobal("$lt") || starlib.HiddenGlobal("lt") {
		t.Errorf("HiddenGlobal: $lt hidden %v, lt hidden %v", starlib.HiddenGlobal("$lt"), starlib.HiddenGlobal("lt"))
	}
}
