package converters

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"

	"github.com/blocks-go/blocks/nd"
)

// This file reads the Python pickles CIFAR-10 and CIFAR-100 are
// distributed as (Python 2 cPickle, protocol 2: dicts of strings, lists of
// ints and numpy arrays), enough of the pickle machine for them and for
// Python 3 pickles of the same data (protocols 2 to 4). It never calls
// anything: the only globals it accepts are numpy's array and dtype
// reconstructors and _codecs.encode, which it interprets itself; any
// other global is an error.

// pyGlobal is a global the unpickler knows.
type pyGlobal string

// pyCall is the result of REDUCE on a known global, before BUILD.
type pyCall struct {
	fn   pyGlobal
	args []any
}

// pyDType is a numpy dtype built by numpy.dtype(name, ...) and BUILD.
type pyDType struct {
	name  string
	order byte // '<', '>', '|' or '=' (from BUILD)
}

// pyArray is a numpy array under reconstruction.
type pyArray struct {
	shape []int
	dtype *pyDType
	data  []byte
	order bool // Fortran order
	built bool
}

type pyMark struct{}

// unpickle reads one pickle. Dicts come back as map[string]any (keys
// must be strings), lists and tuples as []any, ints as int64, floats as
// float64, strings and bytes as string, None as nil, arrays as *pyArray.
func unpickle(r io.Reader) (any, error) {
	br := bufio.NewReader(r)
	var stack []any
	memo := map[int]any{}
	pop := func() (any, error) {
		if len(stack) == 0 {
			return nil, errors.New("pickle: stack underflow")
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v, nil
	}
	popMark := func() ([]any, error) {
		for i := len(stack) - 1; i >= 0; i-- {
			if _, ok := stack[i].(pyMark); ok {
				items := append([]any{}, stack[i+1:]...)
				stack = stack[:i]
				return items, nil
			}
		}
		return nil, errors.New("pickle: no mark")
	}
	readN := func(n int) ([]byte, error) {
		if n < 0 || n > 1<<31 {
			return nil, fmt.Errorf("pickle: bad length %d", n)
		}
		b := make([]byte, n)
		_, err := io.ReadFull(br, b)
		return b, err
	}
	readU := func(size int) (uint64, error) {
		b, err := readN(size)
		if err != nil {
			return 0, err
		}
		var v uint64
		for i := size - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v, nil
	}
	readLine := func() (string, error) {
		s, err := br.ReadString('\n')
		return strings.TrimSuffix(s, "\n"), err
	}
	setItems := func(d any, items []any) error {
		m, ok := d.(map[string]any)
		if !ok {
			return fmt.Errorf("pickle: SETITEM on %T", d)
		}
		for i := 0; i+1 < len(items); i += 2 {
			k, ok := items[i].(string)
			if !ok {
				return fmt.Errorf("pickle: a dict key of type %T", items[i])
			}
			m[k] = items[i+1]
		}
		return nil
	}
	for {
		op, err := br.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("pickle: truncated: %w", err)
		}
		switch op {
		case 0x80: // PROTO
			if _, err := br.ReadByte(); err != nil {
				return nil, err
			}
		case 0x95: // FRAME
			if _, err := readN(8); err != nil {
				return nil, err
			}
		case '.': // STOP
			return pop()
		case '(': // MARK
			stack = append(stack, pyMark{})
		case '}': // EMPTY_DICT
			stack = append(stack, map[string]any{})
		case ']': // EMPTY_LIST
			stack = append(stack, &[]any{})
		case ')': // EMPTY_TUPLE
			stack = append(stack, []any{})
		case 'N':
			stack = append(stack, nil)
		case 0x88:
			stack = append(stack, true)
		case 0x89:
			stack = append(stack, false)
		case 'K', 'M', 'J': // BININT1, BININT2, BININT
			size := map[byte]int{'K': 1, 'M': 2, 'J': 4}[op]
			v, err := readU(size)
			if err != nil {
				return nil, err
			}
			if op == 'J' {
				stack = append(stack, int64(int32(uint32(v))))
			} else {
				stack = append(stack, int64(v))
			}
		case 0x8a: // LONG1
			n, err := br.ReadByte()
			if err != nil {
				return nil, err
			}
			b, err := readN(int(n))
			if err != nil {
				return nil, err
			}
			v := new(big.Int)
			for i := len(b) - 1; i >= 0; i-- {
				v.Lsh(v, 8).Or(v, big.NewInt(int64(b[i])))
			}
			if len(b) > 0 && b[len(b)-1]&0x80 != 0 {
				v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
			}
			if !v.IsInt64() {
				return nil, errors.New("pickle: an integer beyond int64")
			}
			stack = append(stack, v.Int64())
		case 'G': // BINFLOAT
			b, err := readN(8)
			if err != nil {
				return nil, err
			}
			stack = append(stack, math.Float64frombits(binary.BigEndian.Uint64(b)))
		case 'U', 'T', 'C', 'B', 0x8c, 'X', 0x8e: // strings and bytes
			size := map[byte]int{'U': 1, 'T': 4, 'C': 1, 'B': 4, 0x8c: 1, 'X': 4, 0x8e: 8}[op]
			n, err := readU(size)
			if err != nil {
				return nil, err
			}
			b, err := readN(int(n))
			if err != nil {
				return nil, err
			}
			// Python 2 str (SHORT_BINSTRING, BINSTRING) and bytes are kept
			// as Go strings of their raw bytes (what numpy needs of an
			// array's data; Fuel's Latin-1 decoding and numpy's re-encoding
			// cancel out), unicode as its UTF-8.
			stack = append(stack, string(b))
		case 'q', 'r', 0x94: // BINPUT, LONG_BINPUT, MEMOIZE
			if len(stack) == 0 {
				return nil, errors.New("pickle: memo of an empty stack")
			}
			idx := len(memo)
			if op != 0x94 {
				size := 1
				if op == 'r' {
					size = 4
				}
				v, err := readU(size)
				if err != nil {
					return nil, err
				}
				idx = int(v)
			}
			memo[idx] = stack[len(stack)-1]
		case 'h', 'j': // BINGET, LONG_BINGET
			size := 1
			if op == 'j' {
				size = 4
			}
			v, err := readU(size)
			if err != nil {
				return nil, err
			}
			x, ok := memo[int(v)]
			if !ok {
				return nil, fmt.Errorf("pickle: memo %d unset", v)
			}
			stack = append(stack, x)
		case 'c', 0x93: // GLOBAL, STACK_GLOBAL
			var mod, name string
			if op == 'c' {
				if mod, err = readLine(); err != nil {
					return nil, err
				}
				if name, err = readLine(); err != nil {
					return nil, err
				}
			} else {
				n, err1 := pop()
				m, err2 := pop()
				if err1 != nil || err2 != nil {
					return nil, errors.New("pickle: stack underflow")
				}
				mod, _ = m.(string)
				name, _ = n.(string)
			}
			g := pyGlobal(mod + "." + name)
			switch g {
			case "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct", "numpy.ndarray", "numpy.dtype", "_codecs.encode":
			default:
				return nil, fmt.Errorf("pickle: refusing the global %s (only numpy arrays, lists, dicts and strings are read)", g)
			}
			stack = append(stack, g)
		case 't', 0x85, 0x86, 0x87: // TUPLE, TUPLE1..3
			var items []any
			if op == 't' {
				if items, err = popMark(); err != nil {
					return nil, err
				}
			} else {
				n := int(op - 0x84)
				if len(stack) < n {
					return nil, errors.New("pickle: stack underflow")
				}
				items = append([]any{}, stack[len(stack)-n:]...)
				stack = stack[:len(stack)-n]
			}
			stack = append(stack, items)
		case 'l': // LIST
			items, err := popMark()
			if err != nil {
				return nil, err
			}
			stack = append(stack, &items)
		case 'd': // DICT
			items, err := popMark()
			if err != nil {
				return nil, err
			}
			m := map[string]any{}
			if err := setItems(m, items); err != nil {
				return nil, err
			}
			stack = append(stack, m)
		case 'a', 'e': // APPEND, APPENDS
			var items []any
			if op == 'a' {
				v, err := pop()
				if err != nil {
					return nil, err
				}
				items = []any{v}
			} else if items, err = popMark(); err != nil {
				return nil, err
			}
			if len(stack) == 0 {
				return nil, errors.New("pickle: stack underflow")
			}
			l, ok := stack[len(stack)-1].(*[]any)
			if !ok {
				return nil, fmt.Errorf("pickle: APPEND to %T", stack[len(stack)-1])
			}
			*l = append(*l, items...)
		case 's', 'u': // SETITEM, SETITEMS
			var items []any
			if op == 's' {
				v, err1 := pop()
				k, err2 := pop()
				if err1 != nil || err2 != nil {
					return nil, errors.New("pickle: stack underflow")
				}
				items = []any{k, v}
			} else if items, err = popMark(); err != nil {
				return nil, err
			}
			if len(stack) == 0 {
				return nil, errors.New("pickle: stack underflow")
			}
			if err := setItems(stack[len(stack)-1], items); err != nil {
				return nil, err
			}
		case 'R': // REDUCE
			args, err1 := pop()
			fn, err2 := pop()
			if err1 != nil || err2 != nil {
				return nil, errors.New("pickle: stack underflow")
			}
			g, ok := fn.(pyGlobal)
			a, ok2 := args.([]any)
			if !ok || !ok2 {
				return nil, fmt.Errorf("pickle: REDUCE of %T with %T", fn, args)
			}
			v, err := reduce(g, a)
			if err != nil {
				return nil, err
			}
			stack = append(stack, v)
		case 'b': // BUILD
			state, err1 := pop()
			if err1 != nil || len(stack) == 0 {
				return nil, errors.New("pickle: stack underflow")
			}
			if err := build(stack[len(stack)-1], state); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("pickle: unsupported opcode %#02x", op)
		}
	}
}

// reduce applies one of the known globals.
func reduce(g pyGlobal, args []any) (any, error) {
	switch g {
	case "_codecs.encode": // Python 3's protocol-2 bytes: encode(str, 'latin1')
		if len(args) != 2 {
			return nil, errors.New("pickle: _codecs.encode arguments")
		}
		s, _ := args[0].(string)
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 255 {
				return nil, errors.New("pickle: _codecs.encode of a non-Latin-1 string")
			}
			out = append(out, byte(r))
		}
		return string(out), nil
	case "numpy.dtype":
		if len(args) == 0 {
			return nil, errors.New("pickle: numpy.dtype without arguments")
		}
		name, _ := args[0].(string)
		return &pyDType{name: name}, nil
	case "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct":
		return &pyArray{}, nil
	}
	return nil, fmt.Errorf("pickle: cannot call %s", g)
}

// build applies BUILD's state to a dtype or an array.
func build(obj, state any) error {
	st, ok := state.([]any)
	if !ok {
		return fmt.Errorf("pickle: BUILD state %T", state)
	}
	switch o := obj.(type) {
	case *pyDType:
		if len(st) > 1 {
			if s, ok := st[1].(string); ok && len(s) == 1 {
				o.order = s[0]
			}
		}
		return nil
	case *pyArray:
		// (version, shape, dtype, is_fortran, raw data)
		if len(st) != 5 {
			return fmt.Errorf("pickle: array state of %d items", len(st))
		}
		shape, ok := st[1].([]any)
		if !ok {
			return errors.New("pickle: array shape")
		}
		for _, d := range shape {
			n, ok := d.(int64)
			if !ok || n < 0 {
				return errors.New("pickle: array dimension")
			}
			o.shape = append(o.shape, int(n))
		}
		if o.dtype, ok = st[2].(*pyDType); !ok {
			return errors.New("pickle: array dtype")
		}
		o.order, _ = st[3].(bool)
		raw, ok := st[4].(string)
		if !ok {
			return fmt.Errorf("pickle: array data of type %T (object arrays are not read)", st[4])
		}
		o.data = []byte(raw)
		o.built = true
		return nil
	}
	return fmt.Errorf("pickle: BUILD on %T", obj)
}

// toND turns a reconstructed numpy array into an nd.Array (uint8 and
// little-endian integer and float arrays, C order).
func (a *pyArray) toND() (*nd.Array, error) {
	if !a.built {
		return nil, errors.New("pickle: an array without data")
	}
	if a.order && len(a.shape) > 1 {
		return nil, errors.New("pickle: Fortran-order arrays are not read")
	}
	n := nd.Prod(a.shape)
	switch a.dtype.name {
	case "u1", "|u1", "uint8":
		if len(a.data) != n {
			return nil, fmt.Errorf("pickle: %d bytes for %d uint8 elements", len(a.data), n)
		}
		return nd.FromSlice([]byte(a.data), a.shape...), nil
	case "i8", "<i8", "int64":
		if len(a.data) != 8*n || a.dtype.order == '>' {
			return nil, errors.New("pickle: int64 array data")
		}
		out := nd.New(nd.Int64, a.shape...)
		for i := range out.I64() {
			out.I64()[i] = int64(binary.LittleEndian.Uint64(a.data[8*i:]))
		}
		return out, nil
	}
	return nil, fmt.Errorf("pickle: numpy dtype %q is not read", a.dtype.name)
}
