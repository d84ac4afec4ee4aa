package mainloop

// Blocks' log takes any value. Besides numbers, bools, strings, arrays
// and lists ([]any), a record may hold a mapping or a tuple (a MockAlgorithm's
// batch, {"data": 3}, in Blocks' tests): Dict and Tuple keep them with
// their order and kinds, so that a checkpoint gives back what was logged.

// Dict is a log value that is a mapping: its keys and values, in the
// order they were inserted.
type Dict struct {
	Keys   []any
	Values []any
}

// Tuple is a log value that is a tuple.
type Tuple []any
