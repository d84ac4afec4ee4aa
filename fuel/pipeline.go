package fuel

import (
	"encoding/json"
	"fmt"

	"github.com/blocks-go/blocks/numpyrand"
)

// Composite is a part of a data pipeline made over other parts: a
// transformer over its stream, a data stream over its scheme and dataset,
// a merge over its streams, a concatenated scheme over its schemes. A
// checkpoint walks a pipeline through this interface, so a new kind of
// part needs no change there.
type Composite interface {
	// Components are the parts it is made over, in a fixed order.
	Components() []any
}

// Random is a part of a data pipeline that draws random numbers from
// generators of its own that last from epoch to epoch (a shuffled scheme's
// order, a random transformer's draws): a checkpoint saves their states so
// that a resumed run draws the same numbers. (A random transformer's
// iterator state holds its generator too, for a resume mid-epoch.)
type Random interface {
	Generators() []*numpyrand.RandomState
}

// Generator is one generator of a pipeline and the type of the part that
// owns it ("*schemes.Shuffled").
type Generator struct {
	Owner string
	RNG   *numpyrand.RandomState
}

// maxPipelineDepth bounds the walk (a pipeline is never that deep; a cycle
// would be).
const maxPipelineDepth = 64

// Generators walks a pipeline from its outermost part, depth first through
// Composite parts, and gives every generator of its Random parts once, in
// the order met.
func Generators(root any) []Generator {
	var out []Generator
	seen := map[*numpyrand.RandomState]bool{}
	walkPipeline(root, func(x any) {
		if r, ok := x.(Random); ok {
			for _, g := range r.Generators() {
				if g != nil && !seen[g] {
					seen[g] = true
					out = append(out, Generator{Owner: fmt.Sprintf("%T", x), RNG: g})
				}
			}
		}
	})
	return out
}

// Stateful is a part of a data pipeline that keeps a state from epoch to
// epoch besides generators (a DataStream over a dataset defined in a
// script holds what the dataset's open() returned, which next_epoch moves
// on): a checkpoint saves it whenever it is taken, between epochs too, so
// that a resumed run's next epoch starts from the state the uninterrupted
// run's does.
type Stateful interface {
	SaveState() (json.RawMessage, error)
	// RestoreState checks a saved state and returns the function that
	// puts it back (a checkpoint changes nothing before every part of the
	// state has been checked).
	RestoreState(saved json.RawMessage) (func(), error)
}

// States walks a pipeline as Generators does and gives its Stateful
// parts, each once, in the order met.
func States(root any) []Stateful {
	var out []Stateful
	seen := map[Stateful]bool{}
	walkPipeline(root, func(x any) {
		if s, ok := x.(Stateful); ok && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	})
	return out
}

// walkPipeline calls visit on root and, depth first, on the parts of its
// Composite parts.
func walkPipeline(root any, visit func(any)) {
	var walk func(x any, depth int)
	walk = func(x any, depth int) {
		if x == nil || depth > maxPipelineDepth {
			return
		}
		visit(x)
		if c, ok := x.(Composite); ok {
			for _, part := range c.Components() {
				walk(part, depth+1)
			}
		}
	}
	walk(root, 0)
}
