package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// blocks-repl fuel info: what a Fuel HDF5 file holds (Fuel's fuel-info,
// with the split table).
func init() {
	registerFuelCommand(command{
		name: "info",
		usage: `  blocks-repl fuel info FILE.hdf5          what a Fuel HDF5 file holds: attributes, sources (dtype, shape,
                                           axis labels), and the splits x sources table with example counts
`,
		run: fuelInfo,
	})
}

func fuelInfo(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: blocks-repl fuel info FILE.hdf5")
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	info, err := h5.Describe(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl fuel info: %v\n", err)
		return 1
	}
	writeFuelInfo(stdout, info)
	return 0
}

func writeFuelInfo(out io.Writer, info *h5.FileInfo) {
	fmt.Fprintf(out, "%s\n", info.Path)
	if len(info.Attributes) > 0 {
		fmt.Fprintf(out, "\nattributes:\n")
		names := make([]string, 0, len(info.Attributes))
		for k := range info.Attributes {
			names = append(names, k)
		}
		sort.Strings(names)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		for _, k := range names {
			fmt.Fprintf(tw, "  %s\t%s\n", k, info.Attributes[k])
		}
		tw.Flush()
	}
	fmt.Fprintf(out, "\nsources:\n")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  source\tdtype\tshape\taxis labels\n")
	for _, s := range info.Sources {
		dt, shape := s.DType, nd.ShapeString(s.Shape)
		if s.Vlen {
			dt = "vlen " + dt
			shape += ", examples of varying shape"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", s.Name, dt, shape, strings.Join(s.AxisLabels, ", "))
	}
	tw.Flush()
	fmt.Fprintf(out, "\nsplits:\n")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  split\tsource\texamples\trows\tcomment\n")
	for _, r := range info.Split {
		n, rows := "-", "not available"
		if r.Available {
			if r.IndicesPath != "" {
				n, rows = fmt.Sprint(len(r.Indices)), "indices "+r.IndicesPath
			} else {
				n, rows = fmt.Sprint(r.Stop-r.Start), fmt.Sprintf("[%d, %d)", r.Start, r.Stop)
			}
		}
		comment := r.Comment
		if comment == "." {
			comment = ""
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Split, r.Source, n, rows, comment)
	}
	tw.Flush()
}
