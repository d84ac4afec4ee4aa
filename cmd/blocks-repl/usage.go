package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Usage errors print the command's own usage lines, not the whole help;
// --help after a command prints them on stdout and exits 0.

// commandHelpOwn lists the commands that answer --help themselves.
var commandHelpOwn = map[string]bool{"fuel": true, "plot": true, "dashboard": true}

// isHelpArg reports whether args ask for help (-h, -help, --help) before
// a script or checkpoint name.
func isHelpArg(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return false
}

// commandUsage is the usage of one command: its lines of the help and,
// with details (--help), the options it takes.
func commandUsage(name string, details bool) string {
	var b strings.Builder
	b.WriteString("usage:\n")
	if c, ok := commands[name]; ok {
		b.WriteString(c.usage)
	}
	d, ok := commandDetails[name]
	switch {
	case details && ok:
		b.WriteString("\n" + d + "\n(blocks-repl help lists every command)\n")
	case ok:
		fmt.Fprintf(&b, "(blocks-repl %s --help for its options)\n", name)
	default:
		b.WriteString("(blocks-repl help lists every command)\n")
	}
	return b.String()
}

// commandDetails are the options of the commands that have some.
var commandDetails = map[string]string{
	"run":    runOptions + parallelOptions,
	"resume": trustOption + deviceOption + resumeLogOptions + parallelOptions,
	"replay": trustOption,
	"graph":  "  --set NAME=VALUE, --device DEV as for run.\n",
}

const trustOption = `  --trust            a checkpoint is data from elsewhere, so without --trust its
                     script runs sandboxed: it writes only under the current
                     directory and connects to no data server. --trust lifts
                     both, for a checkpoint you made yourself (docs/hardening.md).
`

const deviceOption = `  --set NAME=VALUE   as for run; applied and recorded, or refused when it would
                     change the restored state (docs/checkpoints.md).
  --device DEV       as for run.
`

// badUsage reports a usage error of command name (exit status 2).
// answerOwnHelp answers -h, --help or help as the first argument of a
// command that answers --help itself (commandHelpOwn): its usage lines
// and help on stdout.
func answerOwnHelp(args []string, stdout io.Writer, usage, help string) bool {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintf(stdout, "usage:\n%s\n%s", usage, help)
		return true
	}
	return false
}

// ownUsageError prints a usage error of such a command, with its usage
// lines and help, and returns the exit status 2.
func ownUsageError(stderr io.Writer, name string, err error, usage, help string) int {
	fmt.Fprintf(stderr, "blocks-repl %s: %v\n\nusage:\n%s\n%s", name, err, usage, help)
	return 2
}

// parseOneArg parses a command line of flags and one positional argument
// (what, named when it is missing), flags allowed before and after it, and
// returns the argument.
func parseOneArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", errors.New("missing " + what)
	}
	arg := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected arguments after %s: %s", arg, strings.Join(fs.Args(), " "))
	}
	return arg, nil
}

func badUsage(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "blocks-repl %s: %v\n%s", name, err, commandUsage(name, false))
	return 2
}
