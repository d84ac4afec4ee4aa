package starlib

import (
	"fmt"
	"reflect"
	"sync"

	"go.starlark.net/starlark"
)

// Python's id(x) and hex(n).
//
// id(x) is a number of its own for each object, the same every time it is
// asked within a run: a counter, given out in order of first use (a brick
// gets its number when it is made: bricks.Config.NewID), never a memory
// address, so that the same script gives the same numbers on every run.
// Values without identity of their own in Starlark (numbers, strings,
// None, booleans) share the number of an equal value, as Python's small
// ints and interned strings do. Blocks' brick repr shows hex(id(brick)).

// ObjectIDs numbers a run's objects.
type ObjectIDs struct {
	mu   sync.Mutex
	last int64
	ids  map[any]int64
	// kept holds the slices (tuples) numbered by their array, so that
	// the array is not reused by another while the run goes on.
	kept []starlark.Value
}

// Next is a number not given out before.
func (o *ObjectIDs) Next() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last++
	return o.last
}

// sliceKey is the identity of a tuple: its array and length.
type sliceKey struct {
	t   reflect.Type
	ptr uintptr
	n   int
}

// Of is x's number.
func (o *ObjectIDs) Of(x starlark.Value) int64 {
	if h, ok := x.(interface{ ObjectID() int64 }); ok {
		if id := h.ObjectID(); id != 0 {
			return id
		}
	}
	var key any = x
	rv := reflect.ValueOf(x)
	if !rv.Type().Comparable() {
		if rv.Kind() != reflect.Slice {
			return o.Next() // a value without identity: a new object each time
		}
		key = sliceKey{t: rv.Type(), ptr: rv.Pointer(), n: rv.Len()}
	} else if !hashable(key) {
		return o.Next()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if id, ok := o.ids[key]; ok {
		return id
	}
	if o.ids == nil {
		o.ids = map[any]int64{}
	}
	if _, ok := key.(sliceKey); ok {
		o.kept = append(o.kept, x)
	}
	o.last++
	o.ids[key] = o.last
	return o.last
}

const idsKey = "starlib.ids"

// IDs are the thread's run's object numbers (a thread outside a run has
// its own).
func IDs(thread *starlark.Thread) *ObjectIDs {
	if s := state(thread); s != nil {
		return &s.ids
	}
	if o, ok := thread.Local(idsKey).(*ObjectIDs); ok {
		return o
	}
	o := &ObjectIDs{}
	thread.SetLocal(idsKey, o)
	return o
}

// idBuiltins are id and hex.
func idBuiltins() starlark.StringDict {
	return starlark.StringDict{
		"id": NewBuiltin("id", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x starlark.Value
			if err := starlark.UnpackPositionalArgs("id", args, kwargs, 1, &x); err != nil {
				return nil, err
			}
			return starlark.MakeInt64(IDs(thread).Of(x)), nil
		}),
		"hex": NewBuiltin("hex", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x starlark.Value
			if err := starlark.UnpackPositionalArgs("hex", args, kwargs, 1, &x); err != nil {
				return nil, err
			}
			n, ok := x.(starlark.Int)
			if !ok {
				return nil, fmt.Errorf("TypeError: '%s' object cannot be interpreted as an integer", x.Type())
			}
			if bi := n.BigInt(); bi.Sign() < 0 {
				return starlark.String("-0x" + bi.Neg(bi).Text(16)), nil
			}
			return starlark.String("0x" + n.BigInt().Text(16)), nil
		}),
	}
}

// hashable reports whether key can be a map key (a comparable type may
// hold a value that is not, in an interface field).
func hashable(key any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_ = map[any]bool{key: true}
	return true
}
