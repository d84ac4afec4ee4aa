package core

import "github.com/blocks-go/blocks/nd"

// The loops' per-step views and copies without allocations (scan.go).

// viewCache holds one array per (step, slot) of a loop, made on first use
// and pointed again at the call's buffers each time (setView: no
// allocation while the buffers stay the same, as the executor's do).
type viewCache [][]*nd.Array

// at is the view of src at off with the given shape, for slot of step.
func (c *viewCache) at(steps, step, slot, slots int, src *nd.Array, off int, shape []int) *nd.Array {
	if len(*c) != steps {
		*c = make(viewCache, steps)
	}
	row := (*c)[step]
	if len(row) != slots {
		row = make([]*nd.Array, slots)
		(*c)[step] = row
	}
	a := row[slot]
	if a == nil {
		a = &nd.Array{Shape: shape}
		row[slot] = a
	}
	setView(a, src.Data, off, off+nd.Prod(shape))
	return a
}

// copyAt copies src into dst's data from element off.
func copyAt(dst *nd.Array, off int, src *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		if s, ok := src.Data.([]float32); ok {
			copy(d[off:off+len(s)], s)
			return
		}
	case []float64:
		if s, ok := src.Data.([]float64); ok {
			copy(d[off:off+len(s)], s)
			return
		}
	}
	copyInto(view(dst, off, src.Shape), src)
}

// addAt adds src into dst's data from element off.
func addAt(dst *nd.Array, off int, src *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		if s, ok := src.Data.([]float32); ok {
			d = d[off : off+len(s)]
			for i, v := range s {
				d[i] += v
			}
			return
		}
	case []float64:
		if s, ok := src.Data.([]float64); ok {
			d = d[off : off+len(s)]
			for i, v := range s {
				d[i] += v
			}
			return
		}
	}
	addInto(view(dst, off, src.Shape), src)
}

// sumAt sets dst = g[off:off+size] + c (the state gradient of a step: its
// output gradient plus the carry from the step after it), in that order.
func sumAt(dst, g *nd.Array, off int, c *nd.Array) {
	switch d := dst.Data.(type) {
	case []float32:
		gs, ok1 := g.Data.([]float32)
		cs, ok2 := c.Data.([]float32)
		if ok1 && ok2 {
			gs = gs[off : off+len(d)]
			for i := range d {
				d[i] = gs[i] + cs[i]
			}
			return
		}
	case []float64:
		gs, ok1 := g.Data.([]float64)
		cs, ok2 := c.Data.([]float64)
		if ok1 && ok2 {
			gs = gs[off : off+len(d)]
			for i := range d {
				d[i] = gs[i] + cs[i]
			}
			return
		}
	}
	copyInto(dst, view(g, off, dst.Shape))
	addInto(dst, c)
}
