package starlib

import (
	"fmt"
	"io"

	"go.starlark.net/starlark"
)

// A Nexter is an iterator that keeps its position between calls, such as
// the iterator stream.get_epoch_iterator() returns: next(it) takes one
// item from it.
type Nexter interface {
	starlark.Value
	NextBatch() (starlark.Value, error)
}

// nextBuiltin is Python's next(iterator[, default]): the iterator's next
// item; at its end, default when given, else an error.
func nextBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var it, def starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &it, &def); err != nil {
		return nil, err
	}
	n, ok := it.(Nexter)
	if !ok {
		return nil, fmt.Errorf("next: want an iterator such as stream.get_epoch_iterator(), got %s", it.Type())
	}
	v, err := n.NextBatch()
	if err == io.EOF {
		if def != nil {
			return def, nil
		}
		return nil, fmt.Errorf("next: the iterator is exhausted (StopIteration)")
	}
	if err != nil {
		return nil, fmt.Errorf("next: %w", err)
	}
	return v, nil
}
