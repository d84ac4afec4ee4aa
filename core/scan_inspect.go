package core

// IsScan reports whether v is the node of a loop made by Scan (Blocks'
// ComputationGraph.scans lists them).
func IsScan(v *Variable) bool {
	_, ok := v.op.(*ScanOp)
	return ok
}

// ScanInnerVariables are the variables of a loop's step graph: its
// per-step placeholders (sequence slices, states, contexts) and every
// variable its step outputs are computed from. Nil when v is not a loop.
func ScanInnerVariables(v *Variable) []*Variable {
	s, ok := v.op.(*ScanOp)
	if !ok {
		return nil
	}
	seen := map[*Variable]bool{}
	var out []*Variable
	for _, p := range s.info.placeholders {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, a := range Ancestors(s.info.innerOuts) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
