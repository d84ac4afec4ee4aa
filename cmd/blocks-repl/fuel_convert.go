package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/fuel/converters"
)

// blocks-repl fuel convert: Fuel's fuel-convert.
func init() {
	registerFuelCommand(command{
		name: "convert",
		usage: `  blocks-repl fuel convert DATASET [ARG] [-d IN] [-o OUT] [--output-filename NAME] [--dtype DTYPE] [--shuffle-seed N]
                                           convert downloaded files to Fuel's HDF5 file (` + strings.Join(converters.Names(), ", ") + `);
                                           mnist reads the idx files gzipped or plain; --dtype (mnist): float32, float64, bool;
                                           ARG: svhn's format (1 or 2), caltech101_silhouettes' size (16 or 28),
                                           celeba's format (aligned_cropped or 64);
                                           --shuffle-seed N (ilsvrc2010, ilsvrc2012): the training set's order on disk
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
	seed := fs.Int("shuffle-seed", -1, "ilsvrc2010, ilsvrc2012: seed to use for randomizing order of the training set on disk (default: Fuel's config.default_seed)")
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
	// svhn takes which_format and caltech101_silhouettes size, as
	// positional arguments (fuel-convert svhn 2).
	wantArgs := 1
	if len(positional) > 0 && (positional[0] == "svhn" || positional[0] == "caltech101_silhouettes" || positional[0] == "celeba") {
		wantArgs = 2
	}
	if len(positional) != wantArgs {
		fmt.Fprintf(stderr, "usage: blocks-repl fuel convert DATASET [-d IN] [-o OUT]\n"+
			"       blocks-repl fuel convert svhn {1,2} | caltech101_silhouettes {16,28} | celeba {aligned_cropped,64} [-d IN] [-o OUT]\n  DATASET: one of %s\n", strings.Join(converters.Names(), ", "))
		return 2
	}
	if wantArgs == 2 && positional[0] == "celeba" {
		opts.WhichFormat = positional[1]
	} else if wantArgs == 2 {
		n, err := strconv.Atoi(positional[1])
		if err != nil {
			fmt.Fprintf(stderr, "blocks-repl fuel convert %s: %q is not a number\n", positional[0], positional[1])
			return 2
		}
		opts.Format, opts.Size = n, n
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "shuffle-seed" {
			opts.ShuffleSeed = seed
		}
	})
	opts.Command = strings.Join(append([]string{"blocks-repl", "fuel", "convert"}, args...), " ")
	path, err := converters.Convert(positional[0], opts)
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl fuel convert: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return 0
}
