package blocks

import (
	"fmt"
	"reflect"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Blocks' extensions, step rules, algorithms, main loops,
// initialization schemes, graphs and models are ordinary Python
// objects: equal only to themselves, and hashable by identity, so that a
// script may keep them in a set or use them as dict keys. Their Starlark
// values wrap a Go object, and one Go object may get several wrappers
// (main_loop.extensions, main_loop.algorithm and brick.weights_init make
// new ones), so identity is the wrapped Go object's: same reports it and
// identityHash hashes it. Hashes are addresses, which vary from run to
// run; Starlark's dicts and sets keep insertion order, so no result
// depends on them.

// same reports whether the Go objects a and b (the wrapped values of
// two Starlark values) are one object: the same pointer, or equal
// values of one comparable type (an initialization scheme is a value). A
// comparable struct holding an incomparable value in an interface field
// (a Sparse scheme over a SparseND one) is equal only to itself.
func same(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// identityHash hashes the wrapped Go object a consistently with same;
// wrapper (the Starlark value) stands for an object that is not
// comparable, which is then only equal to the same wrapper.
func identityHash(a any, wrapper starlark.Value) (uint32, error) {
	if a != nil {
		v := reflect.ValueOf(a)
		switch v.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			return addressHash(v.Pointer()), nil
		}
		if v.Type().Comparable() {
			return starlark.String(v.Type().String()).Hash()
		}
	}
	return addressHash(reflect.ValueOf(wrapper).Pointer()), nil
}

func addressHash(p uintptr) uint32 {
	u := uint64(p)
	return uint32(u) ^ uint32(u>>32)
}

// compareObjects is CompareSameType for values compared by identity: x
// and y are the Starlark values, a and b the Go objects they wrap.
func compareObjects(op syntax.Token, x, y starlark.Value, a, b any) (bool, error) {
	s, err := compareIdentity(op, x == y || same(a, b))
	if err != nil {
		return false, fmt.Errorf("%s %s %s not supported", x.Type(), op, y.Type())
	}
	return s, nil
}

// Extensions (CompareSameType in extension_name.go).
func (e *Extension) Hash() (uint32, error) { return identityHash(e.E, e) }

func (s *StepRule) Hash() (uint32, error) { return identityHash(s.R, s) }
func (s *StepRule) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, s, y, s.R, y.(*StepRule).R)
}

func (a *Algorithm) Hash() (uint32, error) { return identityHash(a.Algorithm(), a) }
func (a *Algorithm) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, a, y, a.Algorithm(), y.(*Algorithm).Algorithm())
}

func (m *MainLoop) Hash() (uint32, error) { return identityHash(m.M, m) }
func (m *MainLoop) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, m, y, m.M, y.(*MainLoop).M)
}

func (s *Scheme) Hash() (uint32, error) { return identityHash(s.S, s) }
func (s *Scheme) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, s, y, s.S, y.(*Scheme).S)
}

func (g *ComputationGraph) Hash() (uint32, error) { return identityHash(g.G, g) }
func (g *ComputationGraph) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, g, y, g.G, y.(*ComputationGraph).G)
}

func (m *Model) Hash() (uint32, error) { return identityHash(m.M, m) }
func (m *Model) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, m, y, m.M, y.(*Model).M)
}

func (f *VariableFilter) Hash() (uint32, error) { return identityHash(f.F, f) }
func (f *VariableFilter) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, f, y, f.F, y.(*VariableFilter).F)
}

func (s *selectorValue) Hash() (uint32, error) { return identityHash(s.s, s) }
func (s *selectorValue) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, s, y, s.s, y.(*selectorValue).s)
}

func (a *AggregationScheme) Hash() (uint32, error) { return identityHash(a.S, a) }
func (a *AggregationScheme) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareObjects(op, a, y, a.S, y.(*AggregationScheme).S)
}

func (s *BeamSearch) Hash() (uint32, error) { return identityHash(nil, s) }
func (c *BNContext) Hash() (uint32, error)  { return identityHash(nil, c) }
