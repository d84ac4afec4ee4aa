package starlib

import (
	"fmt"

	"go.starlark.net/starlark"
)

// MaxNesting bounds every recursive walk over script values (lists,
// tuples and dicts inside each other): shape inference, conversion to Go
// values for the log and the checkpoint, json. A list that contains
// itself (l.append(l)) or a value nested millions deep would otherwise
// recurse until Go's 1 GB stack overflows, a fatal error that no recover
// catches.
const MaxNesting = 1000

// Nesting guards one recursive walk over script values: call Enter
// before descending into a container and Leave when done with it. Enter
// fails when the walk is MaxNesting deep or when the container (a list,
// dict or set, by identity) is already on the path.
type Nesting struct {
	path []starlark.Value
}

// Enter pushes v on the walk's path, or says why it cannot.
func (n *Nesting) Enter(v starlark.Value) error {
	switch v.(type) {
	case *starlark.List, *starlark.Dict, *starlark.Set:
		// Interfaces of different dynamic types compare unequal
		// without panicking, so tuples on the path are harmless.
		for _, p := range n.path {
			if p == v {
				return fmt.Errorf("a %s that contains itself (a cycle, as after l.append(l)) cannot be walked", v.Type())
			}
		}
	}
	if len(n.path) >= MaxNesting {
		return fmt.Errorf("a value nested more than %d deep (lists, tuples or dicts inside each other) is refused", MaxNesting)
	}
	n.path = append(n.path, v)
	return nil
}

// Leave pops the container Enter pushed last.
func (n *Nesting) Leave() { n.path = n.path[:len(n.path)-1] }
