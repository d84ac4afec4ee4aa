package starlib_test

import (
	"slices"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

func TestStrings(t *testing.T) {
	list := starlark.NewList([]starlark.Value{starlark.String("a"), starlark.String("b")})
	tuple := starlark.Tuple{starlark.String("x")}
	for _, c := range []struct {
		v    starlark.Value
		want []string
	}{{list, []string{"a", "b"}}, {tuple, []string{"x"}}, {starlark.NewList(nil), nil}} {
		ss, bad, ok := starlib.Strings(c.v)
		if !ok || bad != nil || !slices.Equal(ss, c.want) {
			t.Errorf("Strings(%v) = %q, %v, %v; want %q", c.v, ss, bad, ok, c.want)
		}
	}
	one := starlark.MakeInt(1)
	for _, c := range []struct{ v, bad starlark.Value }{
		{nil, nil},
		{starlark.None, nil},
		{starlark.String("abc"), nil},
		{one, nil},
		{starlark.Tuple{starlark.String("a"), one}, one},
		{starlark.Tuple{starlark.Tuple{}}, starlark.Tuple{}},
	} {
		ss, bad, ok := starlib.Strings(c.v)
		if ok || ss != nil || !sameValue(bad, c.bad) {
			t.Errorf("Strings(%v) = %q, %v, %v; want not ok, element %v", c.v, ss, bad, ok, c.bad)
		}
	}
}

func sameValue(a, b starlark.Value) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	eq, err := starlark.Equal(a, b)
	return err == nil && eq
}
