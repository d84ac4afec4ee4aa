package graph

import (
	"fmt"
	"io"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// Shapes infers the shape of every variable it can: shared variables and
// constants from their values, data inputs from inputShapes (by name), and
// op results from their inputs' shapes. Variables whose shape depends on
// an input not given are left out.
func (g *ComputationGraph) Shapes(inputShapes map[string][]int) map[*core.Variable][]int {
	out := map[*core.Variable][]int{}
	for _, v := range g.Variables {
		switch {
		case v.IsShared() || v.IsConstant():
			out[v] = v.Value().Shape
		case v.IsInput():
			if s, ok := inputShapes[v.Name]; ok && len(s) == v.NDim() {
				out[v] = s
			}
		default:
			ins := make([][]int, len(v.Inputs()))
			known := true
			for k, in := range v.Inputs() {
				s, ok := out[in]
				if !ok {
					known = false
					break
				}
				ins[k] = s
			}
			if known {
				if s, err := v.Op().Shape(ins); err == nil {
					out[v] = s
				}
			}
		}
	}
	return out
}

func kindLabel(v *core.Variable) string {
	switch v.Kind() {
	case core.KindInput:
		return "input"
	case core.KindShared:
		return "shared"
	case core.KindConstant:
		return "constant"
	}
	return v.Op().String()
}

func roleNames(v *core.Variable) string {
	var rs []string
	for _, r := range v.Tag.Roles {
		rs = append(rs, r.Name)
	}
	return strings.Join(rs, ",")
}

func brickLabel(v *core.Variable) string {
	if c := v.Tag.ApplicationCall; c != nil {
		return c.Brick.AnnotationName() + "." + c.Application
	}
	if b := BrickOf(v); b != nil {
		return b.AnnotationName()
	}
	return ""
}

// Print writes the graph to w, one variable a line in topological order:
// its number, name, what computes it (input, shared, constant or the op and
// its inputs' numbers), type, shape where known (see Shapes), roles and the
// brick (and application) that made it. Unnamed constants are summarised on
// the line of the variable that uses them.
func (g *ComputationGraph) Print(w io.Writer, inputShapes map[string][]int) error {
	shapes := g.Shapes(inputShapes)
	num := map[*core.Variable]int{}
	n := 0
	for _, v := range g.Variables {
		if v.IsConstant() && v.Name == "" || v.IsConstant() && v.NDim() == 0 {
			continue
		}
		n++
		num[v] = n
	}
	fmt.Fprintf(w, "ComputationGraph: %d variables, %d inputs, %d parameters, %d outputs\n", len(g.Variables), len(g.Inputs()), len(g.Parameters()), len(g.Outputs))
	for _, v := range g.Variables {
		k, ok := num[v]
		if !ok {
			continue
		}
		what := kindLabel(v)
		if v.Kind() == core.KindOp {
			var args []string
			for _, in := range v.Inputs() {
				if j, ok := num[in]; ok {
					args = append(args, fmt.Sprintf("%%%d", j))
				} else {
					args = append(args, in.String())
				}
			}
			what += "(" + strings.Join(args, ", ") + ")"
		}
		name := v.Name
		if name == "" {
			name = "-"
		}
		line := fmt.Sprintf("%%%-3d %-28s %-40s %s", k, name, what, v.TypeString())
		if s, ok := shapes[v]; ok {
			line += " " + nd.ShapeString(s)
		}
		if r := roleNames(v); r != "" {
			line += " [" + r + "]"
		}
		if b := brickLabel(v); b != "" {
			line += " <" + b + ">"
		}
		for _, o := range g.Outputs {
			if o == v {
				line += " OUTPUT OF GRAPH"
				break
			}
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// String is Print's text without input shapes.
func (g *ComputationGraph) String() string {
	var b strings.Builder
	_ = g.Print(&b, nil)
	return b.String()
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// WriteDOT writes the graph in Graphviz's DOT language: data inputs as
// ellipses, shared variables as boxes (parameters filled), op results as
// plain boxes labelled with the op, the variable's name, roles and shape
// where known; the graph's outputs are drawn with a double border. Render
// it with `dot -Tsvg graph.dot > graph.svg`.
func (g *ComputationGraph) WriteDOT(w io.Writer, inputShapes map[string][]int) error {
	shapes := g.Shapes(inputShapes)
	id := map[*core.Variable]string{}
	var b strings.Builder
	b.WriteString("digraph ComputationGraph {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n")
	for i, v := range g.Variables {
		id[v] = fmt.Sprintf("v%d", i)
		var label []string
		attrs := []string{}
		switch v.Kind() {
		case core.KindInput:
			attrs = append(attrs, "shape=ellipse", "style=filled", "fillcolor=\"#cfe2ff\"")
			label = append(label, v.Name)
		case core.KindShared:
			attrs = append(attrs, "shape=box")
			if core.HasRole(v, core.Parameter) {
				attrs = append(attrs, "style=filled", "fillcolor=\"#d1e7dd\"")
			}
			label = append(label, v.Name)
		case core.KindConstant:
			attrs = append(attrs, "shape=plaintext")
			label = append(label, v.String())
		default:
			attrs = append(attrs, "shape=box", "style=rounded")
			label = append(label, v.Op().String())
			if v.Name != "" {
				label = append(label, v.Name)
			}
		}
		if r := roleNames(v); r != "" {
			label = append(label, "["+r+"]")
		}
		if s, ok := shapes[v]; ok {
			label = append(label, nd.ShapeString(s))
		}
		for _, o := range g.Outputs {
			if o == v {
				attrs = append(attrs, "peripheries=2")
			}
		}
		attrs = append(attrs, "label="+dotQuote(strings.Join(label, "\n")))
		fmt.Fprintf(&b, "  %s [%s];\n", id[v], strings.Join(attrs, ", "))
	}
	for _, v := range g.Variables {
		for _, in := range v.Inputs() {
			if j, ok := id[in]; ok {
				fmt.Fprintf(&b, "  %s -> %s;\n", j, id[v])
			}
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
