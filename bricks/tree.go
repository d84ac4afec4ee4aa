package bricks

import (
	"fmt"
	"io"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// PrintTree writes the brick hierarchy under b, as the REPL shows a
// brick and blocks-repl graph --var draws it: one brick a line ("Class
// name (state)"), its parameters (and a batch normalization's population
// statistics) under it with dtype, shape and roles, then its children.
func PrintTree(w io.Writer, b Brick) error {
	var sb strings.Builder
	printTree(&sb, b, "", "")
	_, err := io.WriteString(w, sb.String())
	return err
}

func printTree(sb *strings.Builder, x Brick, first, rest string) {
	base := x.BaseBrick()
	state := "not allocated"
	switch {
	case base.Initialized:
		state = "initialized"
	case base.Allocated:
		state = "allocated"
	}
	fmt.Fprintf(sb, "%s%s %s (%s)\n", first, base.Class(), base.Name, state)
	vars := base.Parameters
	if bn, ok := x.(*BatchNormalization); ok {
		vars = append(append([]*core.Variable(nil), vars...), bn.PopulationStatistics()...)
	}
	n, i := len(vars)+len(base.Children), 0
	for _, p := range vars {
		i++
		branch, _ := treeBranch(i == n)
		line := p.Name
		if v := p.Value(); v != nil {
			line += " " + v.DType().String() + " " + nd.ShapeString(v.Shape)
		}
		var roles []string
		for _, r := range p.Tag.Roles {
			roles = append(roles, r.Name)
		}
		if len(roles) > 0 {
			line += " [" + strings.Join(roles, ", ") + "]"
		}
		fmt.Fprintf(sb, "%s%s%s\n", rest, branch, line)
	}
	for _, c := range base.Children {
		i++
		branch, cont := treeBranch(i == n)
		printTree(sb, c, rest+branch, rest+cont)
	}
}

func treeBranch(last bool) (branch, cont string) {
	if last {
		return "└── ", "    "
	}
	return "├── ", "│   "
}
