package cpu

import (
	"fmt"
	"slices"
	"time"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Profile runs the plan for args reps times (its updates not applied, its
// outputs not copied) timing every step, and returns the time per call of
// each kind of op, largest first. A loop (Scan) counts as one op: its
// steps run inside it. Run it once first (planning, warming up).
func (e *Executor) Profile(args []*nd.Array, reps int) (_ []core.OpTime, err error) {
	p, err := e.plan(args)
	if err != nil {
		return nil, err
	}
	cur := -1
	defer func() {
		if r := recover(); r != nil {
			recoverDType(&e.g, r, cur, &err)
		}
	}()
	e.bind(p, args)
	times := make([]time.Duration, len(p.steps))
	for range reps {
		for k, s := range p.steps {
			cur = s.node
			out := p.vals[s.node]
			ins := p.args[:len(s.in)]
			for k, j := range s.in {
				ins[k] = p.vals[j]
			}
			if s.into >= 0 {
				// an update written in place: time it into its own buffer
				out.Data = nd.New(out.DType(), out.Shape...).Data
			}
			t0 := time.Now()
			if r, ok := s.op.(core.ErrRunner); ok {
				if err := r.RunErr(out, ins); err != nil {
					return nil, e.g.NodeError(s.node, err)
				}
			} else {
				s.op.Run(out, ins)
			}
			times[k] += time.Since(t0)
		}
	}
	byName := map[string]*core.OpTime{}
	var res []*core.OpTime
	for k, s := range p.steps {
		name := fmt.Sprintf("%s %s", s.op, nd.ShapeString(p.vals[s.node].Shape))
		o := byName[name]
		if o == nil {
			o = &core.OpTime{Op: name}
			byName[name] = o
			res = append(res, o)
		}
		o.Calls++
		o.Time += times[k] / time.Duration(reps)
	}
	slices.SortStableFunc(res, func(a, b *core.OpTime) int { return int(b.Time - a.Time) })
	out := make([]core.OpTime, len(res))
	for i, o := range res {
		out[i] = *o
	}
	return out, nil
}
