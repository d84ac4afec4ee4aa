package starlib

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// A Describer has a description for people, longer than its String: what
// the interactive session prints when a value is echoed or asked about
// with :info.
type Describer interface {
	Describe() string
}

// Describe is v's description for people: Describe() when v has one, else
// its String().
func Describe(v starlark.Value) string {
	if d, ok := v.(Describer); ok {
		return d.Describe()
	}
	return v.String()
}

// Describe summarises an array: dtype and shape, statistics, and its
// values (elided in the middle when there are many).
func (a *Array) Describe() string { return describeArray(a.A) }

func describeArray(a *nd.Array) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ndarray %s %s", a.DType(), nd.ShapeString(a.Shape))
	if n := a.Size(); n > 1 {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for i := 0; i < n; i++ {
			v := a.Flat(i)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			sum += v
		}
		mean := sum / float64(n)
		ss := 0.0
		for i := 0; i < n; i++ {
			d := a.Flat(i) - mean
			ss += d * d
		}
		fmt.Fprintf(&b, "  mean=%.4g std=%.4g min=%.4g max=%.4g", mean, math.Sqrt(ss/float64(n)), lo, hi)
	}
	b.WriteString("\n")
	b.WriteString(a.String())
	return b.String()
}

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

// Describe lists the stream's sources with their axis labels.
func (s *Stream) Describe() string {
	var b strings.Builder
	b.WriteString(s.Type())
	labels := s.S.AxisLabels()
	for _, src := range s.S.Sources() {
		fmt.Fprintf(&b, "\n  %s", src)
		if l, ok := labels[src]; ok && len(l) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(l, ", "))
		}
	}
	return b.String()
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
	return "MainLoop\n" + (&Log{L: m.M.Log}).Describe()
}
