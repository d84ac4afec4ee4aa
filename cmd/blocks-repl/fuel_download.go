package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/blocks-go/blocks/fuel/download"
)

// blocks-repl fuel download DATASET [ARGS] [-d DIR] [--clear]: Fuel's
// fuel-download, with mirrors, resumption and checksums (fuel/download).
func init() {
	registerFuelCommand(command{
		name: "download",
		usage: `  blocks-repl fuel download DATASET [ARGS] [-d DIR] [--clear]
                                           download a dataset's files into DIR (default .):
                                           ` + strings.Join(download.Names(), ", ") + `
                                           (svhn FORMAT: 1 or 2; caltech101_silhouettes SIZE: 16 or 28);
                                           --clear deletes them instead; FUEL_DOWNLOAD_MIRRORS
                                           (comma-separated base URLs) replaces the built-in addresses
`,
		run: fuelDownload,
	})
}

func fuelDownload(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	dir, clear := ".", false
	var pos []string
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "blocks-repl fuel download: "+format+"\n\nusage:\n%s", append(a, fuelCommands["download"].usage)...)
		return 2
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d" || a == "--directory":
			if i+1 == len(args) {
				return usage("%s needs a directory", a)
			}
			i++
			dir = args[i]
		case strings.HasPrefix(a, "-d="), strings.HasPrefix(a, "--directory="):
			dir = a[strings.IndexByte(a, '=')+1:]
		case a == "--clear" || a == "-clear":
			clear = true
		case a == "-h" || a == "--help":
			fmt.Fprintf(stdout, "usage:\n%s", fuelCommands["download"].usage)
			return 0
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return usage("unknown flag %s", a)
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) == 0 {
		return usage("missing DATASET")
	}
	files, err := download.Lookup(pos[0], pos[1:])
	if err != nil {
		return usage("%s", strings.TrimPrefix(err.Error(), "download: "))
	}
	if m := os.Getenv("FUEL_DOWNLOAD_MIRRORS"); m != "" {
		files = download.UseMirrors(files, strings.Split(m, ","))
	}
	if clear {
		if err := download.Clear(dir, files); err != nil {
			fmt.Fprintf(stderr, "blocks-repl: %v\n", err)
			return 1
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// Progress goes to stderr, as Fuel's.
	if err := download.Download(ctx, dir, files, download.Options{Progress: stderr}); err != nil {
		var fe *download.FetchError
		if !errors.As(err, &fe) {
			fmt.Fprintf(stderr, "blocks-repl: %v\n", err)
			return 1
		}
		// Each failure is on stderr already, as it happened.
		what := "its address failed"
		if len(fe.URLs) > 1 {
			what = fmt.Sprintf("all %d of its addresses failed", len(fe.URLs))
		}
		fmt.Fprintf(stderr, "blocks-repl: fuel download: %s was not downloaded: %s (above)\n", fe.Name, what)
		fmt.Fprint(stderr, downloadNextStep(fe, pos, dir, files))
		return 1
	}
	return 0
}

// downloadNextStep says what to do after every address of a file failed:
// without a network, bring the files by hand (a file already in DIR is
// checked and kept); with one, try another mirror.
func downloadNextStep(fe *download.FetchError, args []string, dir string, files []download.File) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	again, where := "blocks-repl fuel download "+strings.Join(args, " "), "this directory"
	if dir != "." {
		again += " -d " + dir
		where = dir
	}
	var b strings.Builder
	if fe.Unreachable() {
		fmt.Fprintf(&b, "No address of %s could be reached: is this machine offline?\n", fe.Name)
	} else {
		fmt.Fprintf(&b, "Every address of %s answered, but not with the file (see above).\n", fe.Name)
	}
	fmt.Fprintf(&b, "Next step: copy %s into %s from a machine that has them and run %q again (a file already there is checked against its published digest and kept),\n", strings.Join(names, ", "), where, again)
	b.WriteString("or set FUEL_DOWNLOAD_MIRRORS to the comma-separated base URLs of a mirror that serves them.\n")
	return b.String()
}
