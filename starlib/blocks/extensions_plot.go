package blocks

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/train/plot"
)

// Module blocks.extensions.plot (Blocks kept it in blocks-extras):
//
//	Plot(document, channels, path=None, x_axis="iterations", width=800, height=None, **triggers)
//	    redraws an image of log channels (default after every epoch and after training).
//	    channels: a list of record names (one panel) or a list of lists (one panel each);
//	    path: a .png or .svg file (default document + ".png"); document is the title;
//	    x_axis: "iterations" or "epochs".
func extensionsPlotModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "blocks.extensions.plot", Members: starlark.StringDict{
		"Plot": starlib.NewBuiltin("Plot", plotExtension),
	}})
	return
}

func plotExtension(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	tr, rest, err := splitTriggers(b.Name(), kwargs)
	if err != nil {
		return nil, err
	}
	var document string
	var channels *starlark.List
	var path starlark.Value = starlark.None
	xAxis := plot.XIterations
	width := 800
	var height starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, rest, "document", &document, "channels", &channels, "path?", &path,
		"x_axis?", &xAxis, "width?", &width, "height?", &height); err != nil {
		return nil, err
	}
	var groups [][]string
	var single []string
	for i := 0; i < channels.Len(); i++ {
		switch c := channels.Index(i).(type) {
		case starlark.String:
			single = append(single, string(c))
		case starlark.Indexable:
			var g []string
			for j := 0; j < c.Len(); j++ {
				s, ok := starlark.AsString(c.Index(j))
				if !ok {
					return nil, fmt.Errorf("Plot: channels[%d][%d] is %s, want a record name", i, j, c.Index(j).Type())
				}
				g = append(g, s)
			}
			groups = append(groups, g)
		default:
			return nil, fmt.Errorf("Plot: channels[%d] is %s, want a record name or a list of them", i, channels.Index(i).Type())
		}
	}
	if len(single) > 0 {
		if len(groups) > 0 {
			return nil, fmt.Errorf("Plot: channels must be all names (one panel) or all lists (one panel each)")
		}
		groups = [][]string{single}
	}
	p := document + ".png"
	if path != starlark.None {
		s, ok := starlark.AsString(path)
		if !ok {
			return nil, fmt.Errorf("Plot: path must be a string, got %s", path.Type())
		}
		p = s
	}
	p, err = starlib.WritePath(thread, p)
	if err != nil {
		return nil, fmt.Errorf("Plot: %w", err)
	}
	h := 0
	if height != starlark.None {
		if err := starlark.AsInt(height, &h); err != nil {
			return nil, fmt.Errorf("Plot: height: %v", err)
		}
	}
	ext, err := plot.NewPlot(p, plot.Options{Title: document, Channels: groups, XAxis: xAxis, Width: width, Height: h}, tr)
	if err != nil {
		return nil, err
	}
	if show := starlib.DisplayOf(thread); show != nil {
		// In a notebook the image is shown inline, and each redraw
		// replaces it in place.
		id := "plot-" + randomID()
		mime := "image/png"
		if strings.EqualFold(filepath.Ext(p), ".svg") {
			mime = "image/svg+xml"
		}
		ext.Drawn = func(path string) error {
			b, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("Plot: %w", err)
			}
			show(id, map[string][]byte{mime: b})
			return nil
		}
	}
	return &Extension{E: ext}, nil
}

// randomID is 16 random hex digits (a display's id).
func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
