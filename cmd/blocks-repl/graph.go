package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/core/graph"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
)

func init() {
	registerCommand(command{
		name: "graph",
		usage: `  blocks-repl graph [--set NAME=VALUE]... [--var NAME] [--shape INPUT=D,D...]... [--dot FILE] SCRIPT.star
                                           run a script, then print the computation graph (or
                                           brick tree) it leaves in the global NAME (default: cg);
                                           --dot writes the graph in Graphviz DOT instead
`,
		run: graphCommand,
	})
}

// shapeFlags is the repeatable --shape INPUT=D,D,... flag.
type shapeFlags map[string][]int

func (s shapeFlags) String() string { return "" }

func (s shapeFlags) Set(v string) error {
	name, dims, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want INPUT=D,D,..., got %q", v)
	}
	var shape []int
	for _, d := range strings.Split(dims, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil || n < 0 {
			return fmt.Errorf("--shape %s: %q is not a dimension", name, d)
		}
		shape = append(shape, n)
	}
	s[name] = shape
	return nil
}

func graphCommand(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	sets := overrides{}
	shapes := shapeFlags{}
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(sets, "set", "override a setting: NAME=VALUE")
	fs.Var(shapes, "shape", "an input's shape: INPUT=D,D,...")
	varName := fs.String("var", "cg", "the global holding a ComputationGraph, Model, variable or brick")
	dot := fs.String("dot", "", "write Graphviz DOT to this file")
	dev := fs.String("device", os.Getenv("BLOCKS_DEVICE"), "where graphs run: cpu, cuda or cuda:N")
	usageError := func(err error) int {
		badUsage(stderr, "graph", err)
		return 2
	}
	script, err := parseOneArg(fs, args, "SCRIPT.star")
	if err != nil {
		return usageError(err)
	}
	if err := checkDevice(*dev); err != nil {
		fmt.Fprintf(stderr, "blocks-repl graph: %v\n", err)
		return 1
	}
	src, err := os.ReadFile(script)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl: %v\n", err)
		return 1
	}
	globals, err := starlib.ExecFile(script, src, starlib.Options{Overrides: sets, Stdout: stderr, Device: *dev, Library: all.Library()})
	if err != nil {
		fmt.Fprintln(stderr, starlib.Backtrace(err))
		return 1
	}
	v, ok := globals[*varName]
	if !ok {
		var names []string
		for n, g := range globals {
			switch g.(type) {
			case *starblocks.ComputationGraph, *starblocks.Model, *starlib.Variable, *starblocks.Brick:
				names = append(names, n)
			}
		}
		sort.Strings(names)
		fmt.Fprintf(stderr, "blocks-repl graph: %s defines no global %s (graphs, models, variables and bricks it defines: %s)\n", script, *varName, strings.Join(names, ", "))
		return 1
	}
	var g *graph.ComputationGraph
	switch x := v.(type) {
	case *starblocks.ComputationGraph:
		g = x.G
	case *starblocks.Model:
		g = x.M.ComputationGraph
	case *starlib.Variable:
		g = graph.New([]*core.Variable{x.V})
	case *starblocks.Brick:
		if *dot != "" {
			fmt.Fprintf(stderr, "blocks-repl graph: %s is a brick: --dot draws graphs\n", *varName)
			return 1
		}
		if err := bricks.PrintTree(stdout, x.B); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "blocks-repl graph: %s is a %s, not a ComputationGraph, Model, variable or brick\n", *varName, v.Type())
		return 1
	}
	if *dot == "" {
		if err := g.Print(stdout, shapes); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	var b strings.Builder
	if err := g.WriteDOT(&b, shapes); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	tmp := *dot + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(stderr, "blocks-repl graph: %v\n", err)
		return 1
	}
	if err := os.Rename(tmp, *dot); err != nil {
		os.Remove(tmp)
		fmt.Fprintf(stderr, "blocks-repl graph: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (%d variables); render it with: dot -Tsvg %s > graph.svg\n", *dot, len(g.Variables), *dot)
	return 0
}
