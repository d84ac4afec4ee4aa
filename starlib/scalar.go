package starlib

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/nd"
)

// Scalar is a numpy scalar (numpy.float32, numpy.int64, ...; type name
// "numpy.<dtype>"): what Fuel gives for an example of a 1-d source. It has
// numpy's dtype, shape == (), ndim, size, item(), tolist() and astype();
// arithmetic with numbers and other scalars follows numpy 1.x's scalar
// promotion (a Python int counts as int64, a Python float as float64, so
// float32 + 1.0 is a float64); with an array or a symbolic variable it is
// the 0-d array it holds. It is printed as numpy prints it, compares with
// numbers by value (==, !=, <, ... : operators.go) and hashes as the equal
// Starlark number.
//
// Departures (docs/fuel-streams.md): Starlark's dicts, sets, `in` and
// list.index compare keys of different types as unequal, so a numpy
// scalar and the equal Starlark number are different dict keys (use
// x.item() or int(x) for keys).
type Scalar struct {
	A *nd.Array // 0-d, numeric, not bool
}

var (
	_ starlark.Value      = (*Scalar)(nil)
	_ starlark.HasAttrs   = (*Scalar)(nil)
	_ starlark.HasBinary  = (*Scalar)(nil)
	_ starlark.HasUnary   = (*Scalar)(nil)
	_ starlark.Comparable = (*Scalar)(nil)
)

// NewScalar is the numpy scalar of dtype dt holding x (rounded to dt).
func NewScalar(dt nd.DType, x float64) *Scalar {
	a := nd.New(dt)
	a.SetFlat(0, x)
	return &Scalar{A: a}
}

// ScalarValue is a 0-d array's element as numpy gives it: a numpy scalar
// for a numeric dtype, a Starlark bool for bool.
func ScalarValue(a *nd.Array) starlark.Value { return ElementValue(a.DType(), a.Flat(0)) }

// IndexValue is v where Starlark wants an int and Python would call
// v.__index__(): the equal Starlark int for an integer numpy scalar, v
// itself for anything else.
func IndexValue(v starlark.Value) starlark.Value {
	if s, ok := v.(*Scalar); ok && s.A.DType().IsInt() {
		return s.Number()
	}
	return v
}

// IndexArgs are args with IndexValue applied to each (args itself when
// none is a numpy scalar).
func IndexArgs(args starlark.Tuple) starlark.Tuple {
	for i, a := range args {
		if s, ok := a.(*Scalar); ok && s.A.DType().IsInt() {
			out := slices.Clone(args)
			for j := i; j < len(out); j++ {
				out[j] = IndexValue(out[j])
			}
			return out
		}
	}
	return args
}

// ElementValue is an element x of an array of dtype dt as numpy's
// indexing gives it: a numpy scalar of a numeric dtype, a Starlark bool
// for bool.
func ElementValue(dt nd.DType, x float64) starlark.Value {
	if dt == nd.Bool || !dt.IsNumeric() {
		return NumberValue(dt, x)
	}
	return NewScalar(dt, x)
}

func (s *Scalar) value() float64 { return s.A.Flat(0) }

// Number is the Starlark number equal to s (numpy's s.item()).
func (s *Scalar) Number() starlark.Value { return NumberValue(s.A.DType(), s.value()) }

// String is numpy's str of the scalar: an integer's digits, a float's
// shortest digits at its own precision (float32's 0.1 is "0.1") laid out
// as Python's repr.
func (s *Scalar) String() string {
	dt := s.A.DType()
	if !dt.IsFloat() {
		return strconv.FormatInt(int64(s.value()), 10)
	}
	bits := 64
	if dt == nd.Float32 {
		bits = 32
	}
	return pyFloatString(s.value(), bits)
}

// pyFloatString is Python's repr of a float with the shortest digits that
// round-trip at the given bit size: positional for 1e-4 <= |x| < 1e16,
// else scientific.
func pyFloatString(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, bits) // d.ddde±XX
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	sign := ""
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	digits := strings.Replace(mant, ".", "", 1)
	if f == 0 {
		return sign + "0.0"
	}
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := fmt.Sprintf("%+03d", exp)
		return sign + m + "e" + es
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

// Type is numpy's class name, numpy.float32.
func (s *Scalar) Type() string { return "numpy." + s.A.DType().String() }

// Freeze does nothing: scalars are immutable.
func (s *Scalar) Freeze() {}

// Truth is whether the value is non-zero.
func (s *Scalar) Truth() starlark.Bool { return s.value() != 0 }

// Hash is the equal Starlark number's hash (Python's hash(np.float32(0.5))
// is hash(0.5)).
func (s *Scalar) Hash() (uint32, error) { return s.Number().Hash() }

// CompareSameType compares two scalars by value.
func (s *Scalar) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	return compareFloats(op, s.value(), y.(*Scalar).value()), nil
}

func compareFloats(op syntax.Token, x, y float64) bool {
	switch op {
	case syntax.EQL:
		return x == y
	case syntax.NEQ:
		return x != y
	case syntax.LT:
		return x < y
	case syntax.LE:
		return x <= y
	case syntax.GT:
		return x > y
	case syntax.GE:
		return x >= y
	}
	return false
}

// numericOperand is a number's value and numpy dtype as a scalar operand
// (a Python int as int64, a float as float64, a bool as bool).
func numericOperand(v starlark.Value) (float64, nd.DType, bool) {
	switch v := v.(type) {
	case *Scalar:
		return v.value(), v.A.DType(), true
	case starlark.Int:
		f, _ := starlark.AsFloat(v)
		return f, nd.Int64, true
	case starlark.Float:
		return float64(v), nd.Float64, true
	case starlark.Bool:
		if v {
			return 1, nd.Bool, true
		}
		return 0, nd.Bool, true
	}
	return 0, 0, false
}

// scalarCompare is x op y when x or y is a numpy scalar and the other a
// number or a scalar; ok is false otherwise.
func scalarCompare(op syntax.Token, x, y starlark.Value) (r bool, ok bool) {
	_, xs := x.(*Scalar)
	_, ys := y.(*Scalar)
	if !xs && !ys {
		return false, false
	}
	a, _, okx := numericOperand(x)
	b, _, oky := numericOperand(y)
	if !okx || !oky {
		return false, false
	}
	return compareFloats(op, a, b), true
}

// Binary is numpy's scalar arithmetic (+ - * / // %) with numbers and
// scalars; with an array or a variable, the 0-d array's.
func (s *Scalar) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	switch y := y.(type) {
	case *Array:
		return (&Array{A: s.A}).Binary(op, y, side)
	case *Variable:
		return y.Binary(op, &Array{A: s.A}, !side)
	case *starlark.List, starlark.Tuple, starlark.String, starlark.Bytes:
		// [0] * n, "ab" * n: an integer scalar repeats as its int
		// (Python's __index__).
		if op != syntax.STAR || !s.A.DType().IsInt() {
			return nil, nil
		}
		if side == starlark.Left {
			return starlark.Binary(op, s.Number(), y)
		}
		return starlark.Binary(op, y, s.Number())
	}
	b, bdt, ok := numericOperand(y)
	if !ok {
		return nil, nil
	}
	a := s.value()
	adt := s.A.DType()
	if side == starlark.Right {
		a, b, adt, bdt = b, a, bdt, adt
	}
	dt := PromoteDT(adt, bdt)
	if dt == nd.Bool {
		dt = nd.Int64
	}
	var r float64
	switch op {
	case syntax.PLUS:
		r = a + b
	case syntax.MINUS:
		r = a - b
	case syntax.STAR:
		r = a * b
	case syntax.SLASH:
		if !dt.IsFloat() {
			dt = nd.Float64
		}
		r = a / b
	case syntax.SLASHSLASH, syntax.PERCENT:
		if !dt.IsFloat() && b == 0 {
			return nil, fmt.Errorf("numpy.%s %s: integer division by zero", dt, op)
		}
		q := math.Floor(a / b)
		r = q
		if op == syntax.PERCENT {
			r = a - q*b
			if dt.IsFloat() {
				r = math.Mod(a, b)
				if r != 0 && (r < 0) != (b < 0) {
					r += b
				}
			}
		}
	case syntax.AMP, syntax.PIPE, syntax.CIRCUMFLEX, syntax.LTLT, syntax.GTGT:
		if dt.IsFloat() {
			return nil, fmt.Errorf("unsupported operand for %s: %s and %s (numpy's bitwise operators want integers)", op, adt, bdt)
		}
		r, ok = intBitwise(op, int64(a), int64(b))
		if !ok {
			return nil, fmt.Errorf("numpy.%s %s: negative shift count", dt, op)
		}
	default:
		return nil, nil
	}
	if !dt.IsFloat() {
		r = wrapInt(r, dt)
	}
	return NewScalar(dt, r), nil
}

// intBitwise is x op y for numpy's bitwise operators on integers; ok is
// false for a negative shift.
func intBitwise(op syntax.Token, x, y int64) (r float64, ok bool) {
	switch op {
	case syntax.AMP:
		return float64(x & y), true
	case syntax.PIPE:
		return float64(x | y), true
	case syntax.CIRCUMFLEX:
		return float64(x ^ y), true
	}
	if y < 0 {
		return 0, false
	}
	if y > 63 {
		y = 63
	}
	if op == syntax.LTLT {
		return float64(x << y), true
	}
	return float64(x >> y), true
}

// wrapInt is an integer result wrapped to dt's width, as numpy's
// integer arithmetic overflows.
func wrapInt(r float64, dt nd.DType) float64 {
	i := int64(r)
	switch dt {
	case nd.Int8:
		return float64(int8(i))
	case nd.Int16:
		return float64(int16(i))
	case nd.Int32:
		return float64(int32(i))
	case nd.Uint8:
		return float64(uint8(i))
	case nd.Uint16:
		return float64(uint16(i))
	}
	return float64(i)
}

// Unary is -x and +x, keeping the dtype.
func (s *Scalar) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.PLUS:
		return s, nil
	case syntax.MINUS:
		r := -s.value()
		if !s.A.DType().IsFloat() {
			r = wrapInt(r, s.A.DType())
		}
		return NewScalar(s.A.DType(), r), nil
	}
	return nil, nil
}

var scalarAttrs = []string{"astype", "dtype", "item", "ndim", "shape", "size", "tolist"}

// Attr is dtype, shape (()), ndim (0), size (1), item(), tolist() and
// astype(dtype) (a scalar of the new dtype).
func (s *Scalar) Attr(name string) (starlark.Value, error) {
	switch name {
	case "shape":
		return starlark.Tuple{}, nil
	case "ndim":
		return starlark.MakeInt(0), nil
	case "size":
		return starlark.MakeInt(1), nil
	case "dtype":
		return starlark.String(s.A.DType().String()), nil
	case "item", "tolist":
		return NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			return s.Number(), nil
		}), nil
	case "astype":
		return NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			r, err := arrayAstype(thread, NewBuiltin("astype", arrayAstype).BindReceiver(&Array{A: s.A}), args, kwargs)
			if err != nil {
				return nil, err
			}
			if a, ok := r.(*Array); ok && a.A.NDim() == 0 {
				return ScalarValue(a.A), nil
			}
			return r, nil
		}), nil
	}
	return nil, nil
}

// AttrNames lists the attributes and methods.
func (s *Scalar) AttrNames() []string { return scalarAttrs }

// Equal is a script's x == y: Starlark's equality, except that a numpy
// scalar equals the equal number, in lists, tuples and dict values too
// ([numpy.float32(1)] == [1.0], as in Python).
func Equal(x, y starlark.Value) (bool, error) { return equalDepth(x, y, 64) }

func equalDepth(x, y starlark.Value, depth int) (bool, error) {
	if r, ok := scalarCompare(syntax.EQL, x, y); ok {
		return r, nil
	}
	var xs, ys []starlark.Value
	switch x := x.(type) {
	case *starlark.List:
		l, ok := y.(*starlark.List)
		if !ok || x.Len() != l.Len() {
			return starlark.Equal(x, y)
		}
		for i := 0; i < x.Len(); i++ {
			xs, ys = append(xs, x.Index(i)), append(ys, l.Index(i))
		}
	case starlark.Tuple:
		t, ok := y.(starlark.Tuple)
		if !ok || len(x) != len(t) {
			return starlark.Equal(x, y)
		}
		xs, ys = x, t
	case *starlark.Dict:
		d, ok := y.(*starlark.Dict)
		if !ok || x.Len() != d.Len() {
			return starlark.Equal(x, y)
		}
		for _, kv := range x.Items() {
			v, found, err := d.Get(kv[0])
			if err != nil || !found {
				return false, err
			}
			xs, ys = append(xs, kv[1]), append(ys, v)
		}
	default:
		return starlark.Equal(x, y)
	}
	if depth < 1 {
		return false, fmt.Errorf("comparison exceeded maximum recursion depth")
	}
	for i := range xs {
		if eq, err := equalDepth(xs[i], ys[i], depth-1); err != nil || !eq {
			return false, err
		}
	}
	return true, nil
}
