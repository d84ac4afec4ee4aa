package core

import (
	"fmt"
	"math"

	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// elemKind names an elementwise scalar function.
type elemKind int

const (
	// binary
	eAdd elemKind = iota
	eSub
	eMul
	eDiv
	eMaximum
	eMinimum
	ePow
	eLT
	eLE
	eGT
	eGE
	eEQ
	eNEQ
	// unary
	eNeg
	eExp
	eLog
	eTanh
	eSigmoid
	eSoftplus
	eSqr
	eSqrt
	eAbs
	eRelu
	eSign
	eLog1p
	eInv
	// ternary
	eSwitch
)

var elemNames = map[elemKind]string{
	eAdd: "add", eSub: "sub", eMul: "mul", eDiv: "true_div", eMaximum: "maximum", eMinimum: "minimum",
	ePow: "pow", eLT: "lt", eLE: "le", eGT: "gt", eGE: "ge", eEQ: "eq", eNEQ: "neq",
	eNeg: "neg", eExp: "exp", eLog: "log", eTanh: "tanh", eSigmoid: "sigmoid", eSoftplus: "softplus",
	eSqr: "sqr", eSqrt: "sqrt", eAbs: "abs", eRelu: "relu", eSign: "sgn", eLog1p: "log1p", eInv: "inv",
	eSwitch: "switch",
}

func (k elemKind) arity() int {
	switch {
	case k <= eNEQ:
		return 2
	case k == eSwitch:
		return 3
	}
	return 1
}

func (k elemKind) isComparison() bool { return k >= eLT && k <= eNEQ }

// elemOp applies a scalar function elementwise with numpy broadcasting. All
// inputs have the same dtype (constructors insert casts); comparisons give
// uint8 (0 or 1), the others the inputs' dtype (switch: of its branches).
type elemOp struct{ kind elemKind }

func (o elemOp) String() string { return "Elemwise{" + elemNames[o.kind] + "}" }

func (o elemOp) Type(in []*Variable) (nd.DType, int, error) {
	if len(in) != o.kind.arity() {
		return 0, 0, fmt.Errorf("%s takes %d inputs, got %d", o, o.kind.arity(), len(in))
	}
	ndim := 0
	for _, v := range in {
		ndim = max(ndim, v.ndim)
	}
	dt := in[0].dtype
	if o.kind == eSwitch {
		dt = in[1].dtype
	}
	if o.kind.isComparison() {
		dt = nd.Uint8
	}
	return dt, ndim, nil
}

func (o elemOp) Shape(in [][]int) ([]int, error) {
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

// broadcastStrides gives the element strides of an array of shape s read
// as an array of shape out (0 along broadcast axes).
func broadcastStrides(s, out []int) []int {
	st := make([]int, len(out))
	fillBroadcastStrides(st, s, out)
	return st
}

// fillBroadcastStrides is broadcastStrides writing into st (len(out)
// elements, zeroed here).
func fillBroadcastStrides(st, s, out []int) {
	clear(st)
	off := len(out) - len(s)
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 1 {
			st[off+i] = acc
		}
		acc *= s[i]
	}
}

func (o elemOp) Run(out *nd.Array, in []*nd.Array) {
	switch o.kind.arity() {
	case 1:
		switch x := in[0].Data.(type) {
		case []float32:
			unarySplit(o.kind, out.Data.([]float32), x)
		case []float64:
			unarySplit(o.kind, out.Data.([]float64), x)
		case []int64:
			unaryInt(o.kind, out.Data.([]int64), x)
		case []int32:
			unaryInt(o.kind, out.Data.([]int32), x)
		case []uint8:
			unaryInt(o.kind, out.Data.([]uint8), x)
		default:
			panic(Unsupported(o, in[0].DType()))
		}
	case 2:
		switch in[0].Data.(type) {
		case []float32:
			runBinary[float32](o.kind, out, in[0], in[1])
		case []float64:
			runBinary[float64](o.kind, out, in[0], in[1])
		case []int64:
			runBinary[int64](o.kind, out, in[0], in[1])
		case []int32:
			runBinary[int32](o.kind, out, in[0], in[1])
		case []uint8:
			runBinary[uint8](o.kind, out, in[0], in[1])
		default:
			panic(Unsupported(o, in[0].DType()))
		}
	case 3:
		switch out.Data.(type) {
		case []float32:
			runSwitch[float32](out, in)
		case []float64:
			runSwitch[float64](out, in)
		case []int64:
			runSwitch[int64](out, in)
		case []int32:
			runSwitch[int32](out, in)
		case []uint8:
			runSwitch[uint8](out, in)
		default:
			panic(Unsupported(o, out.DType()))
		}
	}
}

type float interface{ ~float32 | ~float64 }

func unaryFloat[T float](k elemKind, out, x []T) {
	switch k {
	case eNeg:
		for i, v := range x {
			out[i] = -v
		}
	case eExp:
		for i, v := range x {
			out[i] = T(math.Exp(float64(v)))
		}
	case eLog:
		for i, v := range x {
			out[i] = T(math.Log(float64(v)))
		}
	case eTanh:
		// float32: vec.Tanh32 (rnn_kernels.go's fused steps use the same)
		if o, ok := any(out).([]float32); ok {
			tanhInto(o, any(x).([]float32))
			return
		}
		for i, v := range x {
			out[i] = T(math.Tanh(float64(v)))
		}
	case eSigmoid:
		if o, ok := any(out).([]float32); ok {
			copy(o, any(x).([]float32))
			sigmoidInPlace(o)
			return
		}
		for i, v := range x {
			out[i] = T(sigmoid(float64(v)))
		}
	case eSoftplus:
		for i, v := range x {
			out[i] = T(softplus(float64(v)))
		}
	case eSqr:
		for i, v := range x {
			out[i] = v * v
		}
	case eSqrt:
		for i, v := range x {
			out[i] = T(math.Sqrt(float64(v)))
		}
	case eAbs:
		for i, v := range x {
			if v < 0 {
				v = -v
			}
			out[i] = v
		}
	case eRelu:
		if o, ok := any(out).([]float32); ok {
			vec.Relu32(o, any(x).([]float32))
			return
		}
		for i, v := range x {
			if !(v > 0) {
				v = 0
			}
			out[i] = v
		}
	case eSign:
		for i, v := range x {
			switch {
			case v > 0:
				out[i] = 1
			case v < 0:
				out[i] = -1
			default:
				out[i] = v // keeps 0 and NaN
			}
		}
	case eLog1p:
		for i, v := range x {
			out[i] = T(math.Log1p(float64(v)))
		}
	case eInv:
		for i, v := range x {
			out[i] = 1 / v
		}
	}
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

type integer interface{ ~int64 | ~int32 | ~uint8 }

func unaryInt[T integer](k elemKind, out, x []T) {
	for i, v := range x {
		switch k {
		case eNeg:
			v = -v
		case eSqr:
			v = v * v
		case eAbs:
			if v < 0 {
				v = -v
			}
		case eRelu:
			if v < 0 {
				v = 0
			}
		case eSign:
			switch {
			case v > 0:
				v = 1
			case v < 0:
				v = ^T(0) // -1 for signed types
			}
		default:
			panic(fmt.Sprintf("core: %s on integers", elemNames[k]))
		}
		out[i] = v
	}
}

// runBinary evaluates a binary kernel with broadcasting: the output is walked
// row by row over its last axis, each input read with stride 0 or 1 there.
func runBinary[T nd.Numeric](k elemKind, out, a, b *nd.Array) {
	av, bv := a.Data.([]T), b.Data.([]T)
	n := out.Size()
	if n == 0 {
		return
	}
	sa, sb := -1, -1
	switch {
	case nd.SameShape(a.Shape, b.Shape) || (len(av) == n && len(bv) == n):
		sa, sb = 1, 1
	case len(bv) == 1:
		sa, sb = 1, 0
	case len(av) == 1:
		sa, sb = 0, 1
	}
	if sa >= 0 {
		if !binSplit(k, out.Data, av, sa, bv, sb, n) {
			binLoop(k, out.Data, 0, av, sa, bv, sb, n)
		}
		return
	}
	forBroadcast(out.Shape, [][]int{a.Shape, b.Shape}, func(o int, offs, strides rowOffsets, inner int) {
		binLoop(k, out.Data, o, av[offs[0]:], strides[0], bv[offs[1]:], strides[1], inner)
	})
}

// maxBroadcastInputs is the most inputs forBroadcast walks together
// (switch has three).
const maxBroadcastInputs = 3

// rowOffsets holds one offset or stride per input of forBroadcast. It is an
// array passed by value so that walking a tensor allocates nothing.
type rowOffsets [maxBroadcastInputs]int

// forBroadcast walks shape row by row along its last axis; for each row it
// calls f with the output offset, the inputs' offsets, their strides along
// the last axis and the row length. It allocates nothing for tensors of up
// to maxFastDims dimensions.
func forBroadcast(shape []int, ins [][]int, f func(o int, offs, strides rowOffsets, inner int)) {
	if len(ins) > maxBroadcastInputs {
		panic(fmt.Sprintf("core: forBroadcast of %d inputs", len(ins)))
	}
	nd_ := len(shape)
	if nd_ > maxFastDims {
		forBroadcastLarge(shape, ins, f)
		return
	}
	var strides [maxBroadcastInputs][maxFastDims]int
	for i, s := range ins {
		fillBroadcastStrides(strides[i][:nd_], s, shape)
	}
	var offs, last rowOffsets
	if nd_ == 0 {
		f(0, offs, last, 1)
		return
	}
	inner := shape[nd_-1]
	for i := range ins {
		last[i] = strides[i][nd_-1]
	}
	var idx [maxFastDims]int
	outer := nd_ - 1
	rows := nd.Prod(shape[:outer])
	for r := 0; r < rows; r++ {
		for i := range ins {
			off := 0
			for d := 0; d < outer; d++ {
				off += idx[d] * strides[i][d]
			}
			offs[i] = off
		}
		f(r*inner, offs, last, inner)
		for d := outer - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// maxFastDims is the most dimensions forBroadcast walks without allocating.
const maxFastDims = 8

// forBroadcastLarge is forBroadcast for tensors of more than maxFastDims
// dimensions.
func forBroadcastLarge(shape []int, ins [][]int, f func(o int, offs, strides rowOffsets, inner int)) {
	nd_ := len(shape)
	strides := make([][]int, len(ins))
	for i, s := range ins {
		strides[i] = broadcastStrides(s, shape)
	}
	var offs, last rowOffsets
	inner := shape[nd_-1]
	for i := range ins {
		last[i] = strides[i][nd_-1]
	}
	idx := make([]int, nd_-1)
	rows := nd.Prod(shape[:nd_-1])
	for r := 0; r < rows; r++ {
		for i := range ins {
			off := 0
			for d, x := range idx {
				off += x * strides[i][d]
			}
			offs[i] = off
		}
		f(r*inner, offs, last, inner)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

func binLoop[T nd.Numeric](k elemKind, outData any, o int, a []T, sa int, b []T, sb int, n int) {
	if k.isComparison() {
		out := outData.([]uint8)[o : o+n]
		for i := range out {
			x, y := a[i*sa], b[i*sb]
			var r bool
			switch k {
			case eLT:
				r = x < y
			case eLE:
				r = x <= y
			case eGT:
				r = x > y
			case eGE:
				r = x >= y
			case eEQ:
				r = x == y
			case eNEQ:
				r = x != y
			}
			if r {
				out[i] = 1
			} else {
				out[i] = 0
			}
		}
		return
	}
	out := outData.([]T)[o : o+n]
	switch k {
	case eAdd:
		if sa == 1 && sb == 1 {
			a, b := a[:n], b[:n]
			if o32, ok := any(out).([]float32); ok && n >= 8 {
				// a + b, 8 lanes at a time (a bias added to each row of
				// a layer's product comes here row by row).
				vec.AddTo32(o32, any(a).([]float32), any(b).([]float32))
				return
			}
			for i := range out {
				out[i] = a[i] + b[i]
			}
			return
		}
		if sa == 1 && sb == 0 {
			a, y := a[:n], b[0]
			for i := range out {
				out[i] = a[i] + y
			}
			return
		}
		for i := range out {
			out[i] = a[i*sa] + b[i*sb]
		}
	case eSub:
		for i := range out {
			out[i] = a[i*sa] - b[i*sb]
		}
	case eMul:
		if sa == 1 && sb == 1 {
			a, b := a[:n], b[:n]
			for i := range out {
				out[i] = a[i] * b[i]
			}
			return
		}
		if sa == 1 && sb == 0 {
			a, y := a[:n], b[0]
			for i := range out {
				out[i] = a[i] * y
			}
			return
		}
		for i := range out {
			out[i] = a[i*sa] * b[i*sb]
		}
	case eDiv:
		for i := range out {
			out[i] = a[i*sa] / b[i*sb]
		}
	case eMaximum:
		for i := range out {
			x, y := a[i*sa], b[i*sb]
			if y > x || y != y {
				x = y
			}
			out[i] = x
		}
	case eMinimum:
		for i := range out {
			x, y := a[i*sa], b[i*sb]
			if y < x || y != y {
				x = y
			}
			out[i] = x
		}
	case ePow:
		for i := range out {
			out[i] = T(math.Pow(float64(a[i*sa]), float64(b[i*sb])))
		}
	}
}

func runSwitch[T nd.Numeric](out *nd.Array, in []*nd.Array) {
	c := in[0].Data.([]uint8)
	a, b := in[1].Data.([]T), in[2].Data.([]T)
	o := out.Data.([]T)
	forBroadcast(out.Shape, [][]int{in[0].Shape, in[1].Shape, in[2].Shape}, func(off int, offs, st rowOffsets, inner int) {
		for i := 0; i < inner; i++ {
			if c[offs[0]+i*st[0]] != 0 {
				o[off+i] = a[offs[1]+i*st[1]]
			} else {
				o[off+i] = b[offs[2]+i*st[2]]
			}
		}
	})
}

// Grad of the elementwise ops, written with the ops themselves. Gradients
// are summed back to each input's shape where it was broadcast.
func (o elemOp) Grad(in []*Variable, out, gz *Variable) []*Variable {
	if o.kind.isComparison() {
		return make([]*Variable, len(in))
	}
	one := func(v *Variable) *Variable { return Const(v.dtype, 1) }
	var g []*Variable
	switch o.kind {
	case eAdd:
		g = []*Variable{gz, gz}
	case eSub:
		g = []*Variable{gz, Neg(gz)}
	case eMul:
		g = []*Variable{Mul(gz, in[1]), Mul(gz, in[0])}
	case eDiv:
		// d(x/y) = 1/y dx - x/y² dy
		g = []*Variable{Div(gz, in[1]), Neg(Mul(gz, Div(out, in[1])))}
	case eMaximum, eMinimum:
		cmp := GE
		if o.kind == eMinimum {
			cmp = LE
		}
		mask := cmp(in[0], in[1])
		g = []*Variable{Switch(mask, gz, Const(gz.dtype, 0)), Switch(mask, Const(gz.dtype, 0), gz)}
	case ePow:
		x, y := in[0], in[1]
		g = []*Variable{Mul(gz, Mul(y, Pow(x, Sub(y, one(y))))), Mul(gz, Mul(Log(x), out))}
	case eNeg:
		g = []*Variable{Neg(gz)}
	case eExp:
		g = []*Variable{Mul(gz, out)}
	case eLog:
		g = []*Variable{Div(gz, in[0])}
	case eTanh:
		g = []*Variable{Mul(gz, Sub(one(out), Sqr(out)))}
	case eSigmoid:
		g = []*Variable{Mul(gz, Mul(out, Sub(one(out), out)))}
	case eSoftplus:
		g = []*Variable{Mul(gz, Sigmoid(in[0]))}
	case eSqr:
		g = []*Variable{Mul(gz, Mul(Const(gz.dtype, 2), in[0]))}
	case eSqrt:
		g = []*Variable{Div(gz, Mul(Const(gz.dtype, 2), out))}
	case eAbs:
		g = []*Variable{Mul(gz, Sgn(in[0]))}
	case eRelu:
		g = []*Variable{apply(ReluGradOp{}, out, gz)} // switch(x > 0, gz, 0), fused (relu_grad.go)
	case eSign:
		g = []*Variable{nil}
	case eLog1p:
		g = []*Variable{Div(gz, Add(in[0], one(in[0])))}
	case eInv:
		g = []*Variable{Neg(Mul(gz, Sqr(out)))}
	case eSwitch:
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

func binary(k elemKind, a, b *Variable) *Variable {
	dt := resultType(a, b)
	if k == eDiv && !dt.IsFloat() {
		dt = nd.Float64
	}
	kt := kernelType(dt)
	r := apply(elemOp{k}, as(a, kt), as(b, kt))
	if kt != dt && !k.isComparison() {
		r = Cast(r, dt)
	}
	return r
}

func unary(k elemKind, x *Variable) *Variable {
	switch k {
	case eExp, eLog, eTanh, eSigmoid, eSoftplus, eSqrt, eLog1p, eInv:
		if !x.dtype.IsFloat() {
			x = Cast(x, nd.Float64)
		}
	}
	if kt := kernelType(x.dtype); kt != x.dtype {
		return Cast(apply(elemOp{k}, Cast(x, kt)), x.dtype)
	}
	return apply(elemOp{k}, x)
}

// Elementwise arithmetic with numpy broadcasting.
func Add(a, b *Variable) *Variable     { return binary(eAdd, a, b) }
func Sub(a, b *Variable) *Variable     { return binary(eSub, a, b) }
func Mul(a, b *Variable) *Variable     { return binary(eMul, a, b) }
func Div(a, b *Variable) *Variable     { return binary(eDiv, a, b) }
func Maximum(a, b *Variable) *Variable { return binary(eMaximum, a, b) }
func Minimum(a, b *Variable) *Variable { return binary(eMinimum, a, b) }
func Pow(a, b *Variable) *Variable     { return binary(ePow, a, b) }

// Comparisons give uint8 variables holding 0 or 1.
func LT(a, b *Variable) *Variable  { return binary(eLT, a, b) }
func LE(a, b *Variable) *Variable  { return binary(eLE, a, b) }
func GT(a, b *Variable) *Variable  { return binary(eGT, a, b) }
func GE(a, b *Variable) *Variable  { return binary(eGE, a, b) }
func EQ(a, b *Variable) *Variable  { return binary(eEQ, a, b) }
func NEQ(a, b *Variable) *Variable { return binary(eNEQ, a, b) }

// Elementwise functions; integer inputs to transcendental functions are
// computed in float64, as Theano does.
func Neg(x *Variable) *Variable      { return unary(eNeg, x) }
func Exp(x *Variable) *Variable      { return unary(eExp, x) }
func Log(x *Variable) *Variable      { return unary(eLog, x) }
func Tanh(x *Variable) *Variable     { return unary(eTanh, x) }
func Sigmoid(x *Variable) *Variable  { return unary(eSigmoid, x) }
func Softplus(x *Variable) *Variable { return unary(eSoftplus, x) }
func Sqr(x *Variable) *Variable      { return unary(eSqr, x) }
func Sqrt(x *Variable) *Variable     { return unary(eSqrt, x) }
func Abs(x *Variable) *Variable      { return unary(eAbs, x) }
func Relu(x *Variable) *Variable     { return unary(eRelu, x) }
func Sgn(x *Variable) *Variable      { return unary(eSign, x) }
func Log1p(x *Variable) *Variable    { return unary(eLog1p, x) }
func Inv(x *Variable) *Variable      { return unary(eInv, x) }

// Switch is Theano's switch(cond, a, b): a where cond is non-zero, else b.
func Switch(cond, a, b *Variable) *Variable {
	if cond.dtype != nd.Uint8 {
		cond = NEQ(cond, Const(cond.dtype, 0))
	}
	dt := resultType(a, b)
	return apply(elemOp{eSwitch}, cond, as(a, dt), as(b, dt))
}
