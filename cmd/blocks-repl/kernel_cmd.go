package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// kernelName is the kernelspec's directory name (jupyter kernelspec list).
const kernelName = "blocks"

const kernelUsage = `  blocks-repl kernel CONNECTION_FILE        the Jupyter kernel (started by Jupyter from the
                                           kernelspec; docs/jupyter.md)
  blocks-repl kernel install [--user|--prefix DIR] [--name NAME]
                                           write the kernelspec that makes Jupyter list
                                           "Blocks (Starlark)" (default --user)
  blocks-repl kernel uninstall [--user|--prefix DIR] [--name NAME]
                                           remove it
`

func init() {
	registerCommand(command{
		name:  "kernel",
		usage: kernelUsage,
		run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
			if len(args) > 0 && (args[0] == "install" || args[0] == "uninstall") {
				return kernelSpecCommand(args[0], args[1:], stdout, stderr)
			}
			return kernelCommand(args, stdout, stderr)
		},
	})
}

// kernelSpec is kernel.json.
type kernelSpec struct {
	Argv          []string       `json:"argv"`
	DisplayName   string         `json:"display_name"`
	Language      string         `json:"language"`
	InterruptMode string         `json:"interrupt_mode"`
	Metadata      map[string]any `json:"metadata"`
}

// kernelSpecCommand installs or uninstalls the kernelspec.
func kernelSpecCommand(what string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kernel "+what, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	user := fs.Bool("user", false, "")
	prefix := fs.String("prefix", "", "")
	name := fs.String("name", kernelName, "")
	if err := fs.Parse(args); err != nil {
		return badUsage(stderr, "kernel", err)
	}
	if fs.NArg() > 0 {
		return badUsage(stderr, "kernel", fmt.Errorf("unexpected arguments after kernel %s: %q", what, fs.Args()))
	}
	if *user && *prefix != "" {
		return badUsage(stderr, "kernel", errors.New("--user and --prefix: give one"))
	}
	if !isIdent(*name) {
		return badUsage(stderr, "kernel", fmt.Errorf("--name %q: want letters, digits and _", *name))
	}
	dir, err := kernelSpecDir(*prefix, *name)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl kernel %s: %v\n", what, err)
		return 1
	}
	if what == "uninstall" {
		if _, err := os.Stat(filepath.Join(dir, "kernel.json")); err != nil {
			fmt.Fprintf(stderr, "blocks-repl kernel uninstall: no kernelspec in %s\n", dir)
			return 1
		}
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(stderr, "blocks-repl kernel uninstall: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "removed the kernelspec %s\n", dir)
		return 0
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl kernel install: the path of this program: %v\n", err)
		return 1
	}
	spec := kernelSpec{
		Argv:          []string{exe, "kernel", "{connection_file}"},
		DisplayName:   "Blocks (Starlark)",
		Language:      "starlark",
		InterruptMode: "signal",
		Metadata:      map[string]any{"debugger": false},
	}
	b, _ := json.MarshalIndent(spec, "", "  ")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "blocks-repl kernel install: %v\n", err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel.json"), append(b, '\n'), 0o644); err != nil {
		fmt.Fprintf(stderr, "blocks-repl kernel install: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "installed the kernelspec %s in %s (jupyter kernelspec list shows it)\n", *name, dir)
	return 0
}

// kernelSpecDir is where Jupyter looks for kernelspecs: PREFIX/share/
// jupyter/kernels/NAME, or the user's ($JUPYTER_DATA_DIR, else
// $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter).
func kernelSpecDir(prefix, name string) (string, error) {
	if prefix != "" {
		abs, err := filepath.Abs(prefix)
		if err != nil {
			return "", err
		}
		return filepath.Join(abs, "share", "jupyter", "kernels", name), nil
	}
	data := os.Getenv("JUPYTER_DATA_DIR")
	if data == "" {
		if x := os.Getenv("XDG_DATA_HOME"); x != "" {
			data = filepath.Join(x, "jupyter")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("no home directory for --user: give --prefix DIR")
			}
			data = filepath.Join(home, ".local", "share", "jupyter")
		}
	}
	return filepath.Join(data, "kernels", name), nil
}
