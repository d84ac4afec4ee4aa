package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// fuelCommands are the subcommands of "blocks-repl fuel" (download,
// convert, info, serve), each in its own file, added from an init function
// with registerFuelCommand.
var fuelCommands = map[string]command{}

func registerFuelCommand(c command) {
	if _, dup := fuelCommands[c.name]; dup {
		panic("blocks-repl: fuel command " + c.name + " registered twice")
	}
	fuelCommands[c.name] = c
}

func fuelUsage() string {
	names := make([]string, 0, len(fuelCommands))
	for n := range fuelCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(fuelCommands[n].usage)
	}
	return b.String()
}

func init() {
	registerCommand(command{
		name:  "fuel",
		usage: "  blocks-repl fuel COMMAND ...             Fuel's data commands (blocks-repl fuel help)\n",
		run: func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
			if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
				w := stdout
				code := 0
				if len(args) == 0 {
					w, code = stderr, 2
				}
				fmt.Fprintf(w, "usage:\n%s", fuelUsage())
				return code
			}
			c, ok := fuelCommands[args[0]]
			if !ok {
				fmt.Fprintf(stderr, "blocks-repl fuel: unknown command %q\n\nusage:\n%s", args[0], fuelUsage())
				return 2
			}
			return c.run(args[1:], stdin, stdout, stderr)
		},
	})
}
