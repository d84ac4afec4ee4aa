package nd

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// String prints a numpy-style summary: small arrays in full, large ones
// with their first and last entries elided in between, as numpy does past
// 1000 elements.
func (a *Array) String() string {
	var b strings.Builder
	summarise := a.Size() > 1000
	a.format(&b, 0, 0, summarise)
	return b.String()
}

func (a *Array) formatElem(i int) string {
	if objs, ok := a.Data.([]*Array); ok {
		if objs[i] == nil {
			return "None"
		}
		return "array(" + objs[i].String() + ", dtype=" + objs[i].DType().String() + ")"
	}
	if strs, ok := a.Data.([]string); ok {
		return strconv.Quote(strs[i])
	}
	if bs, ok := a.Data.([][]byte); ok {
		return "b" + strconv.Quote(string(bs[i]))
	}
	v := a.Flat(i)
	switch a.DType() {
	case Float32, Float64:
		if math.IsNaN(v) {
			return "nan"
		}
		if math.IsInf(v, 0) {
			if v > 0 {
				return "inf"
			}
			return "-inf"
		}
		bits := 64
		if a.DType() == Float32 {
			bits = 32
		}
		s := strconv.FormatFloat(v, 'g', 8, bits)
		if !strings.ContainsAny(s, ".e") {
			s += "."
		}
		return s
	case Bool:
		if v != 0 {
			return "True"
		}
		return "False"
	}
	return strconv.FormatInt(int64(v), 10)
}

func (a *Array) format(b *strings.Builder, axis, off int, summarise bool) {
	if len(a.Shape) == 0 {
		b.WriteString(a.formatElem(0))
		return
	}
	n := a.Shape[axis]
	stride := Prod(a.Shape[axis+1:])
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if summarise && n > 6 && i == 3 {
			b.WriteString("...")
			if axis < len(a.Shape)-1 {
				b.WriteString(",\n" + strings.Repeat(" ", axis+1))
			} else {
				b.WriteString(", ")
			}
			i = n - 3
		}
		if axis == len(a.Shape)-1 {
			b.WriteString(a.formatElem(off + i))
		} else {
			a.format(b, axis+1, off+i*stride, summarise)
		}
		if i < n-1 {
			if axis < len(a.Shape)-1 {
				b.WriteString(",\n" + strings.Repeat(" ", axis+1))
			} else {
				b.WriteString(", ")
			}
		}
	}
	b.WriteByte(']')
}

// Summary is one line for people: dtype, shape and, for non-empty arrays,
// min, max and mean.
func (a *Array) Summary() string {
	if a.Size() == 0 || a.DType() == Object || a.DType() == Str || a.DType() == ByteStr {
		return fmt.Sprintf("array(%s, shape=%v)", a.DType(), a.Shape)
	}
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for i, n := 0, a.Size(); i < n; i++ {
		v := a.Flat(i)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		sum += v
	}
	return fmt.Sprintf("array(%s, shape=%v, min=%.4g, max=%.4g, mean=%.4g)", a.DType(), a.Shape, lo, hi, sum/float64(a.Size()))
}
