package blocks

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Module blocks.log: Blocks' training log on its own.
//
//	TrainingLog()   an empty log: log[i] is the row of iteration i (a dict, made
//	                when first asked for), log.current_row, log.previous_row,
//	                log.status (a dict whose entries can be set:
//	                log.status["iterations_done"] += 1), len(log) (the rows made
//	                so far), iterating gives the (iteration, row) pairs in order;
//	                also a base of script classes, and MainLoop(log=...) takes an
//	                instance or any object with status and current_row (log_script.go)
func logModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.log", Members: starlark.StringDict{
		"TrainingLog": trainingLogBase(starlib.NewBuiltin("TrainingLog", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			return &Log{L: mainloop.NewTrainingLog()}, nil
		})),
	}})
	return
}

// Len is the number of rows made so far.
func (l *Log) Len() int { return l.L.Len() }

// Iterate yields (iteration, row) pairs in iteration order.
func (l *Log) Iterate() starlark.Iterator {
	its := l.L.Iterations()
	sort.Ints(its)
	items := make([]starlark.Value, len(its))
	for i, it := range its {
		r, _ := l.L.Row(it)
		items[i] = starlark.Tuple{starlark.MakeInt(it), &LogRow{R: r}}
	}
	return starlark.NewList(items).Iterate()
}

// statusView is log.status: a dict-like view whose entries can be set.
// Its type is "status", not "dict": Starlark takes two values of the same
// type name for the same Go type when it compares them, and a dict
// compared with a view that called itself "dict" crashed. isinstance(v,
// dict) is true (starlib's builtinTypeNames).
type statusView struct{ s *mainloop.Status }

var (
	_ starlark.HasSetKey       = (*statusView)(nil)
	_ starlark.IterableMapping = (*statusView)(nil)
)

func (v *statusView) String() string        { return statusDict(v.s).String() }
func (v *statusView) Type() string          { return "status" }
func (v *statusView) Freeze()               {}
func (v *statusView) Truth() starlark.Bool  { return true }
func (v *statusView) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: status") }
func (v *statusView) Get(k starlark.Value) (starlark.Value, bool, error) {
	return statusDict(v.s).Get(k)
}
func (v *statusView) SetKey(k, x starlark.Value) error {
	key, ok := starlark.AsString(k)
	if !ok {
		return fmt.Errorf("status keys are strings, got %s", k.Type())
	}
	val, err := logValueOf(x)
	if err != nil {
		return fmt.Errorf("status[%q]: %v", key, err)
	}
	if i, ok := val.(int64); ok {
		val = int(i)
	}
	if l, ok := val.([]any); ok && key == mainloop.StatusEpochEnds {
		ends := make([]int, len(l))
		for i, e := range l {
			if ends[i], ok = e.(int); !ok {
				break
			}
		}
		if ok {
			val = ends
		}
	}
	return v.s.Set(key, val)
}
func (v *statusView) Iterate() starlark.Iterator { return statusDict(v.s).Iterate() }
func (v *statusView) Items() []starlark.Tuple    { return statusDict(v.s).Items() }
func (v *statusView) Len() int                   { return statusDict(v.s).Len() }
func (v *statusView) AttrNames() []string        { return []string{"get", "items", "keys"} }
func (v *statusView) Attr(name string) (starlark.Value, error) {
	return statusDict(v.s).Attr(name)
}
