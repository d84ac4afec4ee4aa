package core

import (
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// ElemKind names an elementwise scalar function.
type ElemKind int

const (
	// binary
	ElemAdd ElemKind = iota
	ElemSub
	ElemMul
	ElemDiv
	ElemMaximum
	ElemMinimum
	ElemPow
	ElemLT
	ElemLE
	ElemGT
	ElemGE
	ElemEQ
	ElemNEQ
	// unary
	ElemNeg
	ElemExp
	ElemLog
	ElemTanh
	ElemSigmoid
	ElemSoftplus
	ElemSqr
	ElemSqrt
	ElemAbs
	ElemRelu
	ElemSign
	ElemLog1p
	ElemInv
	// ternary
	ElemSwitch
)

var elemNames = map[ElemKind]string{
	ElemAdd: "add", ElemSub: "sub", ElemMul: "mul", ElemDiv: "true_div", ElemMaximum: "maximum", ElemMinimum: "minimum",
	ElemPow: "pow", ElemLT: "lt", ElemLE: "le", ElemGT: "gt", ElemGE: "ge", ElemEQ: "eq", ElemNEQ: "neq",
	ElemNeg: "neg", ElemExp: "exp", ElemLog: "log", ElemTanh: "tanh", ElemSigmoid: "sigmoid", ElemSoftplus: "softplus",
	ElemSqr: "sqr", ElemSqrt: "sqrt", ElemAbs: "abs", ElemRelu: "relu", ElemSign: "sgn", ElemLog1p: "log1p", ElemInv: "inv",
	ElemSwitch: "switch",
}

// Kind is the function the op applies.
func (o ElemOp) Kind() ElemKind { return o.kind }

// String is the function's name ("add", "relu", ...).
func (k ElemKind) String() string { return elemNames[k] }

// Arity is the function's number of arguments.
func (k ElemKind) Arity() int {
	switch {
	case k <= ElemNEQ:
		return 2
	case k == ElemSwitch:
		return 3
	}
	return 1
}

// IsComparison says whether the function is a comparison (a uint8 result).
func (k ElemKind) IsComparison() bool { return k >= ElemLT && k <= ElemNEQ }

// ElemOp applies a scalar function elementwise with numpy broadcasting. All
// inputs have the same dtype (constructors insert casts); comparisons give
// uint8 (0 or 1), the others the inputs' dtype (switch: of its branches).
type ElemOp struct{ kind ElemKind }

func (o ElemOp) String() string { return "Elemwise{" + elemNames[o.kind] + "}" }

func (o ElemOp) Type(in []*Variable) (nd.DType, int, error) {
	if len(in) != o.kind.Arity() {
		return 0, 0, fmt.Errorf("%s takes %d inputs, got %d", o, o.kind.Arity(), len(in))
	}
	ndim := 0
	for _, v := range in {
		ndim = max(ndim, v.ndim)
	}
	dt := in[0].dtype
	if o.kind == ElemSwitch {
		dt = in[1].dtype
	}
	if o.kind.IsComparison() {
		dt = nd.Uint8
	}
	return dt, ndim, nil
}

func (o ElemOp) Shape(in [][]int) ([]int, error) {
	out, err := broadcastShapes(in...)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", o, err)
	}
	return out, nil
}

// broadcastShapes is numpy's broadcasting of shapes.
func broadcastShapes(shapes ...[]int) ([]int, error) {
	n := 0
	for _, s := range shapes {
		n = max(n, len(s))
	}
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := n - len(s)
		for i, d := range s {
			switch {
			case out[off+i] == 1:
				out[off+i] = d
			case d != 1 && d != out[off+i]:
				strs := ""
				for k, s := range shapes {
					if k > 0 {
						strs += " and "
					}
					strs += nd.ShapeString(s)
				}
				return nil, fmt.Errorf("shapes %s cannot be broadcast together", strs)
			}
		}
	}
	return out, nil
}

// Grad of the elementwise ops, written with the ops themselves. Gradients
// are summed back to each input's shape where it was broadcast.
func (o ElemOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if o.kind.IsComparison() {
		return make([]*Variable, len(in))
	}
	one := func(v *Variable) *Variable { return Const(v.dtype, 1) }
	var g []*Variable
	switch o.kind {
	case ElemAdd:
		g = []*Variable{gz, gz}
	case ElemSub:
		g = []*Variable{gz, Neg(gz)}
	case ElemMul:
		g = []*Variable{Mul(gz, in[1]), Mul(gz, in[0])}
	case ElemDiv:
		// d(x/y) = 1/y dx - x/y² dy
		g = []*Variable{Div(gz, in[1]), Neg(Mul(gz, Div(out, in[1])))}
	case ElemMaximum, ElemMinimum:
		cmp := GE
		if o.kind == ElemMinimum {
			cmp = LE
		}
		mask := cmp(in[0], in[1])
		g = []*Variable{Switch(mask, gz, Const(gz.dtype, 0)), Switch(mask, Const(gz.dtype, 0), gz)}
	case ElemPow:
		x, y := in[0], in[1]
		g = []*Variable{Mul(gz, Mul(y, Pow(x, Sub(y, one(y))))), Mul(gz, Mul(Log(x), out))}
	case ElemNeg:
		g = []*Variable{Neg(gz)}
	case ElemExp:
		g = []*Variable{Mul(gz, out)}
	case ElemLog:
		g = []*Variable{Div(gz, in[0])}
	case ElemTanh:
		g = []*Variable{Mul(gz, Sub(one(out), Sqr(out)))}
	case ElemSigmoid:
		g = []*Variable{Mul(gz, Mul(out, Sub(one(out), out)))}
	case ElemSoftplus:
		g = []*Variable{Mul(gz, Sigmoid(in[0]))}
	case ElemSqr:
		g = []*Variable{Mul(gz, Mul(Const(gz.dtype, 2), in[0]))}
	case ElemSqrt:
		g = []*Variable{Div(gz, Mul(Const(gz.dtype, 2), out))}
	case ElemAbs:
		g = []*Variable{Mul(gz, Sgn(in[0]))}
	case ElemRelu:
		g = []*Variable{apply(ReluGradOp{}, out, gz)} // switch(x > 0, gz, 0), fused (relu_grad.go)
	case ElemSign:
		g = []*Variable{nil}
	case ElemLog1p:
		g = []*Variable{Div(gz, Add(in[0], one(in[0])))}
	case ElemInv:
		g = []*Variable{Neg(Mul(gz, Sqr(out)))}
	case ElemSwitch:
		zero := Const(gz.dtype, 0)
		g = []*Variable{nil, Switch(in[0], gz, zero), Switch(in[0], zero, gz)}
	}
	for i, x := range in {
		if g[i] == nil || !x.dtype.IsFloat() {
			g[i] = nil
			continue
		}
		g[i] = sumTo(g[i], x)
	}
	return g
}

// promote is numpy's result dtype for two array operands: bool gives
// way to the other type; float32 holds the integers of up to 16 bits
// exactly, wider ones need float64; two integers of the same signedness
// give the wider, and a signed and an unsigned one the smallest signed
// type that holds both (float64 past int64, as numpy's uint64 and int64).
func promote(a, b nd.DType) nd.DType {
	switch {
	case a == b || b == nd.Bool:
		return a
	case a == nd.Bool:
		return b
	case a.IsFloat() && b.IsFloat():
		return nd.Float64
	case a.IsFloat() || b.IsFloat():
		f, i := a, b
		if b.IsFloat() {
			f, i = b, a
		}
		if f == nd.Float32 && i.Size() >= 4 {
			return nd.Float64
		}
		return f
	}
	if unsigned(a) == unsigned(b) {
		if a.Size() >= b.Size() {
			return a
		}
		return b
	}
	s, u := a, b
	if unsigned(a) {
		s, u = b, a
	}
	if s.Size() > u.Size() {
		return s
	}
	switch 2 * u.Size() {
	case 2:
		return nd.Int16
	case 4:
		return nd.Int32
	case 8:
		return nd.Int64
	}
	return nd.Float64
}

// unsigned reports whether the integer dtype dt is unsigned.
func unsigned(dt nd.DType) bool { return dt == nd.Uint8 || dt == nd.Uint16 }

// isNumber reports whether v is a 0-d constant that adapts its dtype to
// the other operand (a number written in a script).
func isNumber(v *Variable) bool { return v.kind == KindConstant && v.ndim == 0 }

// resultType is the dtype two operands are computed in: numpy's promotion,
// except that a number takes the other operand's dtype unless it is a
// float meeting an integer.
func resultType(a, b *Variable) nd.DType {
	switch {
	case isNumber(a) && !isNumber(b) && (b.dtype.IsFloat() || !a.dtype.IsFloat()):
		return b.dtype
	case isNumber(b) && !isNumber(a) && (a.dtype.IsFloat() || !b.dtype.IsFloat()):
		return a.dtype
	}
	return promote(a.dtype, b.dtype)
}

// as returns v in dtype dt: v itself, a retyped number, or a cast.
func as(v *Variable, dt nd.DType) *Variable {
	if v.dtype == dt {
		return v
	}
	if isNumber(v) {
		c := Const(dt, v.value.Flat(0))
		c.Name = v.Name
		return c
	}
	return Cast(v, dt)
}

// kernelType is the dtype the elementwise kernels compute dt in: they
// run on float32, float64, int64, int32 and uint8, so bool is computed as
// uint8 and int16, uint16 and int8 as int32 (exactly, for every op), and the
// result is cast back to dt.
func kernelType(dt nd.DType) nd.DType {
	switch dt {
	case nd.Bool:
		return nd.Uint8
	case nd.Int16, nd.Uint16, nd.Int8:
		return nd.Int32
	}
	return dt
}

func binary(k ElemKind, a, b *Variable) *Variable {
	dt := resultType(a, b)
	if k == ElemDiv && !dt.IsFloat() {
		dt = nd.Float64
	}
	kt := kernelType(dt)
	r := apply(ElemOp{k}, as(a, kt), as(b, kt))
	if kt != dt && !k.IsComparison() {
		r = Cast(r, dt)
	}
	return r
}

func unary(k ElemKind, x *Variable) *Variable {
	switch k {
	case ElemExp, ElemLog, ElemTanh, ElemSigmoid, ElemSoftplus, ElemSqrt, ElemLog1p, ElemInv:
		if !x.dtype.IsFloat() {
			x = Cast(x, nd.Float64)
		}
	}
	if kt := kernelType(x.dtype); kt != x.dtype {
		return Cast(apply(ElemOp{k}, Cast(x, kt)), x.dtype)
	}
	return apply(ElemOp{k}, x)
}

// Elementwise arithmetic with numpy broadcasting.
func Add(a, b *Variable) *Variable     { return binary(ElemAdd, a, b) }
func Sub(a, b *Variable) *Variable     { return binary(ElemSub, a, b) }
func Mul(a, b *Variable) *Variable     { return binary(ElemMul, a, b) }
func Div(a, b *Variable) *Variable     { return binary(ElemDiv, a, b) }
func Maximum(a, b *Variable) *Variable { return binary(ElemMaximum, a, b) }
func Minimum(a, b *Variable) *Variable { return binary(ElemMinimum, a, b) }
func Pow(a, b *Variable) *Variable     { return binary(ElemPow, a, b) }

// Comparisons give uint8 variables holding 0 or 1.
func LT(a, b *Variable) *Variable  { return binary(ElemLT, a, b) }
func LE(a, b *Variable) *Variable  { return binary(ElemLE, a, b) }
func GT(a, b *Variable) *Variable  { return binary(ElemGT, a, b) }
func GE(a, b *Variable) *Variable  { return binary(ElemGE, a, b) }
func EQ(a, b *Variable) *Variable  { return binary(ElemEQ, a, b) }
func NEQ(a, b *Variable) *Variable { return binary(ElemNEQ, a, b) }

// Elementwise functions; integer inputs to transcendental functions are
// computed in float64, as Theano does.
func Neg(x *Variable) *Variable      { return unary(ElemNeg, x) }
func Exp(x *Variable) *Variable      { return unary(ElemExp, x) }
func Log(x *Variable) *Variable      { return unary(ElemLog, x) }
func Tanh(x *Variable) *Variable     { return unary(ElemTanh, x) }
func Sigmoid(x *Variable) *Variable  { return unary(ElemSigmoid, x) }
func Softplus(x *Variable) *Variable { return unary(ElemSoftplus, x) }
func Sqr(x *Variable) *Variable      { return unary(ElemSqr, x) }
func Sqrt(x *Variable) *Variable     { return unary(ElemSqrt, x) }
func Abs(x *Variable) *Variable      { return unary(ElemAbs, x) }
func Relu(x *Variable) *Variable     { return unary(ElemRelu, x) }
func Sgn(x *Variable) *Variable      { return unary(ElemSign, x) }
func Log1p(x *Variable) *Variable    { return unary(ElemLog1p, x) }
func Inv(x *Variable) *Variable      { return unary(ElemInv, x) }

// Switch is Theano's switch(cond, a, b): a where cond is non-zero, else b.
func Switch(cond, a, b *Variable) *Variable {
	if cond.dtype != nd.Uint8 {
		cond = NEQ(cond, Const(cond.dtype, 0))
	}
	dt := resultType(a, b)
	return apply(ElemOp{ElemSwitch}, cond, as(a, dt), as(b, dt))
}
