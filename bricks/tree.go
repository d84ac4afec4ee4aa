package bricks

import (
	"fmt"
	"io"
	"strings"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
)

// PrintTree writes the brick hierarchy under b: one brick a line, indented
// under its parent, with its class, whether it is allocated and
// initialized, and its parameters (and population statistics) with their
// shapes and roles.
func PrintTree(w io.Writer, b Brick) error {
	var sb strings.Builder
	var walk func(x Brick, prefix string, last, root bool)
	walk = func(x Brick, prefix string, last, root bool) {
		base := x.BaseBrick()
		branch, next := "", ""
		if !root {
			branch, next = "├── ", "│   "
			if last {
				branch, next = "└── ", "    "
			}
		}
		state := ""
		switch {
		case base.Initialized:
			state = ", initialized"
		case base.Allocated:
			state = ", allocated"
		}
		fmt.Fprintf(&sb, "%s%s%s (%s%s)\n", prefix, branch, base.Name, base.Class(), state)
		vars := base.Parameters
		if bn, ok := x.(*BatchNormalization); ok {
			vars = append(append([]*core.Variable(nil), vars...), bn.PopulationStatistics()...)
		}
		childPrefix := prefix + next
		for _, p := range vars {
			var roles []string
			for _, r := range p.Tag.Roles {
				roles = append(roles, r.Name)
			}
			pad := "│   "
			if len(base.Children) == 0 {
				pad = "    "
			}
			fmt.Fprintf(&sb, "%s%s.%s %s %s [%s]\n", childPrefix, pad, p.Name, p.Value().DType(), nd.ShapeString(p.Value().Shape), strings.Join(roles, ","))
		}
		for i, c := range base.Children {
			walk(c, childPrefix, i == len(base.Children)-1, false)
		}
	}
	walk(b, "", true, true)
	_, err := io.WriteString(w, sb.String())
	return err
}
