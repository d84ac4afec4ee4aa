package starlib

import (
	"fmt"
	"io"

	"go.starlark.net/starlark"
)

// lazyBuiltins are Starlark's enumerate and zip made lazy, as Python's,
// when an argument is an iterator (an iterable without a length: a stream's
// epoch iterator, iterate_epochs(), a request iterator): Starlark's build
// their whole list first, which reads an epoch to its end before the loop
// body runs (Fuel's tests check Cache.cache between items with
// `for x, size in zip(epoch, sizes)`), and never end on an endless one
// (`zip(range(2), stream.iterate_epochs())`). Their value is then an
// iterator (next() takes one item) that stops at its shortest argument;
// with lists, tuples and other sized arguments only, they are Starlark's.
func lazyBuiltins() starlark.StringDict {
	enumerate := starlark.Universe["enumerate"].(*starlark.Builtin)
	zip := starlark.Universe["zip"].(*starlark.Builtin)
	return starlark.StringDict{
		"enumerate": NewBuiltin("enumerate", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x starlark.Value
			start := 0
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x, &start); err != nil {
				return nil, err
			}
			if !isIterator(x) {
				return enumerate.CallInternal(thread, args, kwargs)
			}
			z, err := newLazyZip(thread, "enumerate", starlark.Tuple{x})
			if err != nil {
				return nil, err
			}
			z.counter, z.count = true, start
			return z, nil
		}),
		"zip": NewBuiltin("zip", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			lazy := false
			for _, a := range args {
				lazy = lazy || isIterator(a)
			}
			if !lazy || len(kwargs) > 0 {
				return zip.CallInternal(thread, args, kwargs)
			}
			return newLazyZip(thread, "zip", args)
		}),
	}
}

// isIterator: x is iterable and has no length.
func isIterator(x starlark.Value) bool {
	_, ok := x.(starlark.Iterable)
	return ok && starlark.Len(x) < 0
}

// lazyZip is a lazy zip or enumerate: each item is taken from its
// arguments when asked for.
type lazyZip struct {
	name    string
	thread  *starlark.Thread
	srcs    []*lazySource
	counter bool // enumerate: items are (count, x)
	count   int
	done    bool
}

// lazySource is one argument: a sized one's items, read at the start (a
// list is not held locked between items), or an iterator's, read as
// asked for.
type lazySource struct {
	items []starlark.Value
	it    starlark.Iterator
	n     Nexter
}

func newLazyZip(thread *starlark.Thread, name string, args starlark.Tuple) (*lazyZip, error) {
	z := &lazyZip{name: name, thread: thread}
	for i, a := range args {
		switch {
		case isNexter(a):
			z.srcs = append(z.srcs, &lazySource{n: a.(Nexter)})
		case isIterator(a):
			z.srcs = append(z.srcs, &lazySource{it: a.(starlark.Iterable).Iterate()})
		default:
			it := starlark.Iterate(a)
			if it == nil {
				return nil, fmt.Errorf("%s: argument #%d is not iterable: %s", name, i+1, a.Type())
			}
			var items []starlark.Value
			var x starlark.Value
			for it.Next(&x) {
				items = append(items, x)
			}
			it.Done()
			z.srcs = append(z.srcs, &lazySource{items: items})
		}
	}
	return z, nil
}

func isNexter(x starlark.Value) bool { _, ok := x.(Nexter); return ok }

var (
	_ Nexter            = (*lazyZip)(nil)
	_ starlark.Iterable = (*lazyZip)(nil)
)

func (z *lazyZip) String() string        { return "<" + z.name + " object>" }
func (z *lazyZip) Type() string          { return z.name }
func (z *lazyZip) Freeze()               {}
func (z *lazyZip) Truth() starlark.Bool  { return true }
func (z *lazyZip) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", z.name) }

// NextBatch is the next item, or io.EOF once an argument is exhausted.
func (z *lazyZip) NextBatch() (starlark.Value, error) {
	if z.done {
		return nil, io.EOF
	}
	item := make(starlark.Tuple, 0, len(z.srcs)+1)
	if z.counter {
		item = append(item, starlark.MakeInt(z.count))
	}
	for _, s := range z.srcs {
		var x starlark.Value
		switch {
		case s.n != nil:
			v, err := s.n.NextBatch()
			if err != nil {
				z.finish()
				return nil, err
			}
			x = v
		case s.it != nil:
			if !s.it.Next(&x) {
				z.finish()
				return nil, io.EOF
			}
		default:
			if len(s.items) == 0 {
				z.finish()
				return nil, io.EOF
			}
			x, s.items = s.items[0], s.items[1:]
		}
		item = append(item, x)
	}
	z.count++
	return item, nil
}

func (z *lazyZip) finish() {
	z.done = true
	for _, s := range z.srcs {
		if s.it != nil {
			s.it.Done()
		}
	}
}

// Iterate iterates over the remaining items; an error of an argument
// stops the script, as a stream's own iteration does.
func (z *lazyZip) Iterate() starlark.Iterator { return &lazyZipIter{z} }

type lazyZipIter struct{ z *lazyZip }

func (it *lazyZipIter) Next(p *starlark.Value) bool {
	v, err := it.z.NextBatch()
	if err != nil {
		if err != io.EOF && it.z.thread != nil {
			it.z.thread.Cancel(fmt.Sprintf("%s: %v", it.z.name, err))
		}
		return false
	}
	*p = v
	return true
}

func (it *lazyZipIter) Done() {}
