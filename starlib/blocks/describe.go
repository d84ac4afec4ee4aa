package blocks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
)

// The descriptions (Describer) of the blocks modules' values.

// Describe draws the brick and its children as a tree, with each
// parameter's dtype, shape and roles (bricks.PrintTree: the same tree as
// blocks-repl graph --var).
func (b *Brick) Describe() string {
	var sb strings.Builder
	_ = bricks.PrintTree(&sb, b.B) // a strings.Builder does not fail
	return strings.TrimRight(sb.String(), "\n")
}

// Describe counts the graph's variables by role, and lists its inputs,
// outputs and parameters.
func (g *ComputationGraph) Describe() string {
	counts := map[string]int{}
	for _, v := range g.G.Variables {
		if len(v.Tag.Roles) == 0 {
			counts["(no role)"]++
		}
		for _, r := range v.Tag.Roles {
			counts[r.Name]++
		}
	}
	roles := make([]string, 0, len(counts))
	for r := range counts {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	var b strings.Builder
	fmt.Fprintf(&b, "ComputationGraph: %d variables\n", len(g.G.Variables))
	fmt.Fprintf(&b, "  inputs:     %s\n", variableNames(g.G.Inputs()))
	fmt.Fprintf(&b, "  outputs:    %s\n", variableNames(g.G.Outputs))
	fmt.Fprintf(&b, "  parameters: %s\n", variableNames(g.G.Parameters()))
	b.WriteString("  variables by role:")
	for _, r := range roles {
		fmt.Fprintf(&b, " %s=%d", r, counts[r])
	}
	return b.String()
}

func variableNames(vs []*core.Variable) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.String()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// Describe shows the log's status and its current row as a table.
func (l *Log) Describe() string {
	var b strings.Builder
	st := &l.L.Status
	fmt.Fprintf(&b, "TrainingLog: %d iterations, %d epochs done\n", st.IterationsDone, st.EpochsDone)
	row := l.L.CurrentRow()
	keys := make([]string, 0, len(row))
	width := 0
	for k := range row {
		keys = append(keys, k)
		width = max(width, len(k))
	}
	sort.Strings(keys)
	fmt.Fprintf(&b, "current row (iteration %d):", st.IterationsDone)
	if len(keys) == 0 {
		b.WriteString(" empty")
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-*s  %s", width, k, goValue(row[k]).String())
	}
	return b.String()
}

// Describe shows the main loop's status and the log's current row.
func (m *MainLoop) Describe() string {
	if m.M == nil {
		return m.Type() + " (its __init__ has not made the loop)"
	}
	return m.Type() + "\n" + (&Log{L: m.M.Log}).Describe()
}
