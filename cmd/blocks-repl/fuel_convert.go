package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/blocks-go/blocks/fuel/converters"
)

// blocks-repl fuel convert: Fuel's fuel-convert.
func init() {
	registerFuelCommand(command{
		name: "convert",
		usage: `  blocks-repl fuel convert DATASET [-d IN] [-o OUT] [--output-filename NAME] [--dtype DTYPE]
                                           convert downloaded files to Fuel's HDF5 file (` + strings.Join(converters.Names(), ", ") + `);
                                           mnist reads the idx files gzipped or plain; --dtype (mnist): float32, float64, bool
`,
		run: fuelConvert,
	})
}

func fuelConvert(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("blocks-repl fuel convert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts converters.Options
	fs.StringVar(&opts.Directory, "d", ".", "directory in which input files reside")
	fs.StringVar(&opts.Directory, "directory", ".", "directory in which input files reside")
	fs.StringVar(&opts.OutputDirectory, "o", ".", "where to save the dataset")
	fs.StringVar(&opts.OutputDirectory, "output-directory", ".", "where to save the dataset")
	fs.StringVar(&opts.OutputFilename, "output-filename", "", "name of the file written (default: the dataset's)")
	fs.StringVar(&opts.DType, "dtype", "", "mnist: float32, float64 or bool (default: uint8 pixels)")
	// Flags may come before or after the dataset name.
	var positional []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "usage: blocks-repl fuel convert DATASET [-d IN] [-o OUT]\n  DATASET: one of %s\n", strings.Join(converters.Names(), ", "))
		return 2
	}
	opts.Command = strings.Join(append([]string{"blocks-repl", "fuel", "convert"}, args...), " ")
	path, err := converters.Convert(positional[0], opts)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl fuel convert: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return 0
}
