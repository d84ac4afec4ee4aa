package cpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/exec/cpu/kernels"
	"github.com/blocks-go/blocks/internal/vec"
	"github.com/blocks-go/blocks/nd"
)

// The elementwise ops' kernels (numpy's broadcasting, the scalar
// functions' loops, internal/vec's vectorized float32 passes), the casts'
// and the reductions'.

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

// elem is core.ElemOp's kernel: its function over the inputs, numpy's
// broadcasting, split across the workers when large (float32, float64).
func elem(op core.Op, out *nd.Array, in []*nd.Array) {
	o := op.(core.ElemOp)
	kind := o.Kind()
	switch kind.Arity() {
	case 1:
		switch x := in[0].Data.(type) {
		case []float32:
			unarySplit(kind, out.Data.([]float32), x)
		case []float64:
			unarySplit(kind, out.Data.([]float64), x)
		case []int64:
			unaryInt(kind, out.Data.([]int64), x)
		case []int32:
			unaryInt(kind, out.Data.([]int32), x)
		case []uint8:
			unaryInt(kind, out.Data.([]uint8), x)
		default:
			panic(core.Unsupported(op, in[0].DType()))
		}
	case 2:
		switch in[0].Data.(type) {
		case []float32:
			runBinary[float32](kind, out, in[0], in[1])
		case []float64:
			runBinary[float64](kind, out, in[0], in[1])
		case []int64:
			runBinary[int64](kind, out, in[0], in[1])
		case []int32:
			runBinary[int32](kind, out, in[0], in[1])
		case []uint8:
			runBinary[uint8](kind, out, in[0], in[1])
		default:
			panic(core.Unsupported(op, in[0].DType()))
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
			panic(core.Unsupported(op, out.DType()))
		}
	}
}

func unaryFloat[T float](k core.ElemKind, out, x []T) {
	switch k {
	case core.ElemNeg:
		for i, v := range x {
			out[i] = -v
		}
	case core.ElemExp:
		for i, v := range x {
			out[i] = T(math.Exp(float64(v)))
		}
	case core.ElemLog:
		for i, v := range x {
			out[i] = T(math.Log(float64(v)))
		}
	case core.ElemTanh:
		// float32: vec.Tanh32 (rnn_steps.go's fused steps use the same)
		if o, ok := any(out).([]float32); ok {
			tanhInto(o, any(x).([]float32))
			return
		}
		for i, v := range x {
			out[i] = T(math.Tanh(float64(v)))
		}
	case core.ElemSigmoid:
		if o, ok := any(out).([]float32); ok {
			copy(o, any(x).([]float32))
			sigmoidInPlace(o)
			return
		}
		for i, v := range x {
			out[i] = T(sigmoid(float64(v)))
		}
	case core.ElemSoftplus:
		for i, v := range x {
			out[i] = T(softplus(float64(v)))
		}
	case core.ElemSqr:
		for i, v := range x {
			out[i] = v * v
		}
	case core.ElemSqrt:
		for i, v := range x {
			out[i] = T(math.Sqrt(float64(v)))
		}
	case core.ElemAbs:
		for i, v := range x {
			if v < 0 {
				v = -v
			}
			out[i] = v
		}
	case core.ElemRelu:
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
	case core.ElemSign:
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
	case core.ElemLog1p:
		for i, v := range x {
			out[i] = T(math.Log1p(float64(v)))
		}
	case core.ElemInv:
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

func unaryInt[T integer](k core.ElemKind, out, x []T) {
	for i, v := range x {
		switch k {
		case core.ElemNeg:
			v = -v
		case core.ElemSqr:
			v = v * v
		case core.ElemAbs:
			if v < 0 {
				v = -v
			}
		case core.ElemRelu:
			if v < 0 {
				v = 0
			}
		case core.ElemSign:
			switch {
			case v > 0:
				v = 1
			case v < 0:
				v = ^T(0) // -1 for signed types
			}
		default:
			panic(fmt.Sprintf("cpu: %s on integers", k))
		}
		out[i] = v
	}
}

// runBinary evaluates a binary kernel with broadcasting: the output is walked
// row by row over its last axis, each input read with stride 0 or 1 there.
func runBinary[T nd.Numeric](k core.ElemKind, out, a, b *nd.Array) {
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
		panic(fmt.Sprintf("cpu: forBroadcast of %d inputs", len(ins)))
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

func binLoop[T nd.Numeric](k core.ElemKind, outData any, o int, a []T, sa int, b []T, sb int, n int) {
	if k.IsComparison() {
		out := outData.([]uint8)[o : o+n]
		for i := range out {
			x, y := a[i*sa], b[i*sb]
			var r bool
			switch k {
			case core.ElemLT:
				r = x < y
			case core.ElemLE:
				r = x <= y
			case core.ElemGT:
				r = x > y
			case core.ElemGE:
				r = x >= y
			case core.ElemEQ:
				r = x == y
			case core.ElemNEQ:
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
	case core.ElemAdd:
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
	case core.ElemSub:
		for i := range out {
			out[i] = a[i*sa] - b[i*sb]
		}
	case core.ElemMul:
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
	case core.ElemDiv:
		for i := range out {
			out[i] = a[i*sa] / b[i*sb]
		}
	case core.ElemMaximum:
		for i := range out {
			x, y := a[i*sa], b[i*sb]
			if y > x || y != y {
				x = y
			}
			out[i] = x
		}
	case core.ElemMinimum:
		for i := range out {
			x, y := a[i*sa], b[i*sb]
			if y < x || y != y {
				x = y
			}
			out[i] = x
		}
	case core.ElemPow:
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

// cast is core.CastOp's kernel: numpy's astype (kernels.Cast).
func cast(op core.Op, out *nd.Array, in []*nd.Array) { kernels.Cast(out, in[0]) }

// sumTo is core.SumToOp's kernel: its first input summed down to the
// output's shape (a view when the sizes agree).
func sumTo(op core.Op, out *nd.Array, in []*nd.Array) {
	g := in[0]
	if g.Size() == out.Size() {
		out.Data = g.Data
		return
	}
	switch o := out.Data.(type) {
	case []float32:
		sumToKernel(o, out.Shape, g.Data.([]float32), g.Shape)
	case []float64:
		sumToKernel(o, out.Shape, g.Data.([]float64), g.Shape)
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

func sumToKernel[T float](out []T, oshape []int, g []T, gshape []int) {
	// A row vector summed over every leading axis (a bias's gradient, 2-d
	// or, after a 3-d product, 3-d): the columns' sums over the rows in
	// order, as the walk below does, on the vectorized split.
	if k := len(gshape); k >= 2 && len(oshape) > 0 && len(out) == gshape[k-1] && oshape[len(oshape)-1] == gshape[k-1] &&
		kernels.ColSumSplit(out, g, nd.Prod(gshape[:k-1]), gshape[k-1]) {
		return
	}
	clear(out)
	forBroadcast(gshape, [][]int{oshape}, func(o int, offs, st rowOffsets, inner int) {
		d := out[offs[0]:]
		if st[0] == 0 {
			var s T
			for _, v := range g[o : o+inner] {
				s += v
			}
			d[0] += s
			return
		}
		for i, v := range g[o : o+inner] {
			d[i] += v
		}
	})
}

// broadcastLike is core.BroadcastLikeOp's kernel: its first input
// broadcast to the output's shape.
func broadcastLike(op core.Op, out *nd.Array, in []*nd.Array) {
	switch o := out.Data.(type) {
	case []float32:
		broadcastKernel(o, out.Shape, in[0].Data.([]float32), in[0].Shape)
	case []float64:
		broadcastKernel(o, out.Shape, in[0].Data.([]float64), in[0].Shape)
	default:
		panic(core.Unsupported(op, out.DType()))
	}
}

func broadcastKernel[T float](out []T, oshape []int, x []T, xshape []int) {
	forBroadcast(oshape, [][]int{xshape}, func(o int, offs, st rowOffsets, inner int) {
		for i := range out[o : o+inner] {
			out[o+i] = x[offs[0]+i*st[0]]
		}
	})
}

// reduceKernelOf is core.ReduceOp's kernel: sums and means accumulated
// in float64, in a fixed order. A sum of more than 16 results (an initial
// state's gradient, a convolution's bias gradient) accumulates in the
// node's own buffer, so that a training step allocates none.
type reduceKernelOf struct {
	op  core.ReduceOp
	acc *[]float64
}

func newReduceKernel(op core.Op) kernel {
	return reduceKernelOf{op.(core.ReduceOp), new([]float64)}
}

func (k reduceKernelOf) String() string { return k.op.String() }

func (k reduceKernelOf) Run(out *nd.Array, in []*nd.Array) {
	o, scratch := k.op, k.acc
	x := in[0]
	if x.DType() != o.DType() {
		x = x.Astype(o.DType()) // integer sums: rare, small
	}
	kept := o.KeptShape(x.Shape)
	count := nd.Prod(x.Shape) / max(1, nd.Prod(kept))
	switch d := out.Data.(type) {
	case []float32:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]float32), x.Shape, count)
	case []float64:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]float64), x.Shape, count)
	case []int64:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]int64), x.Shape, count)
	case []int32:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]int32), x.Shape, count)
	case []uint8:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]uint8), x.Shape, count)
	case []int16:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]int16), x.Shape, count)
	case []uint16:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]uint16), x.Shape, count)
	case []int8:
		reduceKernel(o.Kind(), scratch, d, kept, x.Data.([]int8), x.Shape, count)
	default:
		panic(core.Unsupported(k.op, out.DType()))
	}
}

func reduceKernel[T nd.Numeric](k core.ReduceKind, scratch *[]float64, out []T, kept []int, x []T, xshape []int, count int) {
	switch k {
	case core.ReduceSum, core.ReduceMean:
		// Accumulate in float64 for accuracy; the partition is fixed, so
		// results are the same from run to run.
		var small [16]float64 // no allocation for small results (a mean cost)
		acc := small[:0]
		if len(out) <= len(small) {
			acc = small[:len(out)]
		} else {
			// larger ones accumulate in the node's buffer
			if cap(*scratch) < len(out) {
				*scratch = make([]float64, len(out))
			}
			acc = (*scratch)[:len(out)]
			clear(acc)
		}
		forBroadcast(xshape, [][]int{kept}, func(o int, offs, st rowOffsets, inner int) {
			row := x[o : o+inner]
			if st[0] == 0 {
				s := 0.0
				for _, v := range row {
					s += float64(v)
				}
				acc[offs[0]] += s
				return
			}
			a := acc[offs[0] : offs[0]+inner]
			for i, v := range row {
				a[i] += float64(v)
			}
		})
		for i, s := range acc {
			if k == core.ReduceMean {
				s /= float64(count)
			}
			out[i] = T(s)
		}
	case core.ReduceProd:
		for i := range out {
			out[i] = 1
		}
		forBroadcast(xshape, [][]int{kept}, func(o int, offs, st rowOffsets, inner int) {
			for i, v := range x[o : o+inner] {
				out[offs[0]+i*st[0]] *= v
			}
		})
	case core.ReduceMax, core.ReduceMin:
		seen := make([]bool, len(out))
		forBroadcast(xshape, [][]int{kept}, func(o int, offs, st rowOffsets, inner int) {
			for i, v := range x[o : o+inner] {
				j := offs[0] + i*st[0]
				if !seen[j] || (k == core.ReduceMax && v > out[j]) || (k == core.ReduceMin && v < out[j]) || v != v {
					if seen[j] && out[j] != out[j] {
						continue // NaN propagates
					}
					out[j], seen[j] = v, true
				}
			}
		})
	}
}

// count is core.CountOp's kernel: the number of elements over its axes.
func count(op core.Op, out *nd.Array, in []*nd.Array) {
	axes := op.(core.CountOp).Axes()
	n := 1
	for i, d := range in[0].Shape {
		if axes == nil || slices.Contains(axes, i) {
			n *= d
		}
	}
	out.SetFlat(0, float64(n))
}

// arg is core.ArgOp's kernel: the first index of the largest (smallest)
// element.
func arg(op core.Op, out *nd.Array, in []*nd.Array) {
	o := op.(core.ArgOp)
	isMax := o.IsMax()
	axis, flat := o.Axis()
	x := in[0]
	outer, n, inner := 1, x.Size(), 1
	if !flat {
		outer, n, inner = nd.Prod(x.Shape[:axis]), x.Shape[axis], nd.Prod(x.Shape[axis+1:])
	}
	res := out.I64()
	for a := 0; a < outer; a++ {
		for c := 0; c < inner; c++ {
			best, bi := 0.0, 0
			for i := 0; i < n; i++ {
				v := x.Flat((a*n+i)*inner + c)
				if i == 0 || (isMax && v > best) || (!isMax && v < best) {
					best, bi = v, i
				}
			}
			res[a*inner+c] = int64(bi)
		}
	}
}

// sigmoidInPlace applies the logistic function to s.
func sigmoidInPlace[T float32 | float64](s []T) {
	switch v := any(s).(type) {
	case []float32:
		vec.SigmoidSlice32(v, v)
	case []float64:
		for i, x := range v {
			v[i] = sigmoid(x)
		}
	}
}

// tanhInto is dst = tanh(src).
func tanhInto[T float32 | float64](dst, src []T) {
	switch d := any(dst).(type) {
	case []float32:
		vec.TanhSlice32(d, any(src).([]float32))
	case []float64:
		s := any(src).([]float64)
		s = s[:len(d)]
		for i, x := range s {
			d[i] = math.Tanh(x)
		}
	}
}
