// Package plot draws training-log channels against iterations or epochs
// (blocks-extras' Plot, drawn to files instead of a Bokeh server): PNG or
// SVG images made with gonum.org/v1/plot, one panel per group of
// channels, each with a title, labelled axes and a legend.
//
// The main-loop extension Plot redraws the file as training goes (after
// every epoch by default); Draw draws a finished log (blocks-repl plot).
// Files are replaced atomically, so a viewer never reads half an image.
package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// X axes.
const (
	XIterations = "iterations"
	XEpochs     = "epochs"
)

// Options say what to draw and how.
type Options struct {
	// Title is the image's title (Blocks-extras' document); empty: none.
	Title string
	// Channels are the groups of record names: one panel per group.
	Channels [][]string
	// XAxis is XIterations (default) or XEpochs.
	XAxis string
	// Width and Height are the image's size in pixels (default 800×500
	// per panel... total height 500 for one panel, +350 per extra one).
	Width, Height int
}

// DPI is the resolution of PNG images: Width and Height are pixels.
const DPI = 96

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255},
}

// dashes and glyphs tell apart the lines that share a colour (a panel of
// more channels than the palette has colours).
var (
	dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}
	glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}}
)

// allTimes reports whether every channel of group is a time_* record
// (Timing's, in seconds).
func allTimes(group []string) bool {
	for _, c := range group {
		if !strings.HasPrefix(c, "time_") {
			return false
		}
	}
	return len(group) > 0
}

// DefaultGroups are the panels drawn when no channels are named: every
// numeric record, with Timing's time_* records (seconds, on another
// scale) in a panel of their own.
func DefaultGroups(l *mainloop.TrainingLog) [][]string {
	var values, times []string
	for _, c := range NumericChannels(l) {
		if strings.HasPrefix(c, "time_") {
			times = append(times, c)
		} else {
			values = append(values, c)
		}
	}
	var groups [][]string
	for _, g := range [][]string{values, times} {
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

func (o *Options) size() (int, int) {
	w, h := o.Width, o.Height
	if w <= 0 {
		w = 800
	}
	if h <= 0 {
		h = 500 + 350*(max(len(o.Channels), 1)-1)
	}
	return w, h
}

// EpochOf maps an iteration to a (fractional) epoch: the record written
// at the end of epoch k (iteration _epoch_ends[k-1]) is at epoch k, the
// ones within an epoch in proportion, iteration 0 at 0.
func EpochOf(l *mainloop.TrainingLog, it int) float64 {
	ends := l.Status.EpochEnds
	start := 0
	for k, e := range ends {
		if it <= e {
			if e == start {
				return float64(k + 1)
			}
			return float64(k) + float64(it-start)/float64(e-start)
		}
		start = e
	}
	// In the epoch in progress: its length is unknown; use the last one's.
	n := len(ends)
	length := 1
	if n > 0 {
		prev := 0
		if n > 1 {
			prev = ends[n-2]
		}
		length = max(ends[n-1]-prev, 1)
	}
	return float64(n) + float64(it-start)/float64(length)
}

// Panels builds one gonum plot per channel group.
func Panels(l *mainloop.TrainingLog, o Options) ([]*plot.Plot, error) {
	if len(o.Channels) == 0 {
		return nil, fmt.Errorf("plot: no channels given")
	}
	xAxis := o.XAxis
	if xAxis == "" {
		xAxis = XIterations
	}
	if xAxis != XIterations && xAxis != XEpochs {
		return nil, fmt.Errorf("plot: x axis must be %q or %q, got %q", XIterations, XEpochs, xAxis)
	}
	var panels []*plot.Plot
	for gi, group := range o.Channels {
		p := plot.New()
		if gi == 0 && o.Title != "" {
			p.Title.Text = o.Title
			p.Title.TextStyle.Font.Size = vg.Points(14)
		}
		p.X.Label.Text = xAxis
		p.Y.Label.Text = strings.Join(group, ", ")
		switch {
		case allTimes(group):
			p.Y.Label.Text = "seconds"
		case len(p.Y.Label.Text) > 60:
			p.Y.Label.Text = "value"
		}
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		for ci, name := range group {
			its, vals := l.Channel(name)
			pts := make(plotter.XYs, 0, len(its))
			for i, it := range its {
				x := float64(it)
				if xAxis == XEpochs {
					x = EpochOf(l, it)
				}
				pts = append(pts, plotter.XY{X: x, Y: vals[i]})
			}
			if len(pts) == 0 {
				continue // not logged yet
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("plot: channel %s: %w", name, err)
			}
			// Past the palette, the colours come round again with
			// another dash pattern and glyph: no two lines alike.
			c := palette[ci%len(palette)]
			round := ci / len(palette)
			line.Color = c
			line.Width = vg.Points(1.5)
			line.Dashes = dashes[round%len(dashes)]
			p.Add(line)
			if len(pts) < 50 {
				sc, err := plotter.NewScatter(pts)
				if err == nil {
					sc.Color = c
					sc.Radius = vg.Points(2)
					sc.Shape = glyphs[round%len(glyphs)]
					p.Add(sc)
				}
			}
			p.Legend.Add(name, line)
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// Render writes the image of l's channels to w as "png" or "svg".
func Render(w io.Writer, format string, l *mainloop.TrainingLog, o Options) error {
	panels, err := Panels(l, o)
	if err != nil {
		return err
	}
	pw, ph := o.size()
	width := vg.Length(pw) * vg.Inch / DPI
	height := vg.Length(ph) * vg.Inch / DPI
	var canvas vg.CanvasWriterTo
	switch format {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(DPI))}
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("plot: unknown image format %q (png or svg)", format)
	}
	dc := draw.New(canvas)
	// A white page under everything (PNG is otherwise transparent).
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(rows, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	_, err = canvas.WriteTo(w)
	return err
}

// FormatOf is the image format a file name asks for: "svg" for .svg,
// "png" otherwise.
func FormatOf(path string) string {
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		return "svg"
	}
	return "png"
}

// Draw writes the image of l's channels to path (PNG or SVG by the
// extension), atomically.
func Draw(path string, l *mainloop.TrainingLog, o Options) error {
	var b bytes.Buffer
	if err := Render(&b, FormatOf(path), l, o); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; an image is as readable as any
	// other output (0644, less the umask's bits).
	_ = tmp.Chmod(0o644 &^ umask())
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return nil
}

// NumericChannels are the record names that hold a number in some row of
// l, sorted (what blocks-repl plot draws when no channel is named).
func NumericChannels(l *mainloop.TrainingLog) []string {
	seen := map[string]bool{}
	for _, it := range l.Iterations() {
		r, _ := l.Lookup(it)
		for k, v := range r {
			if _, ok := mainloop.ChannelValue(v); ok {
				seen[k] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Plot is the main-loop extension: it redraws Path (a .png or .svg) with
// the chosen channels when triggered (default after every epoch and after
// training). Blocks-extras' Plot(document, channels).
type Plot struct {
	*extensions.SimpleExtension
	Path    string
	Options Options
	// Off makes the extension draw nothing (the processes other than 0
	// of a data-parallel job).
	Off bool
	// Drawn, when not nil, is called after each drawing of Path (the
	// Jupyter kernel shows the image inline from it).
	Drawn func(path string) error
}

// NewPlot returns the Plot extension.
func NewPlot(path string, o Options, triggers extensions.Triggers) (*Plot, error) {
	if path == "" {
		return nil, fmt.Errorf("Plot: no file to draw to")
	}
	if len(o.Channels) == 0 {
		return nil, fmt.Errorf("Plot: no channels given")
	}
	if o.XAxis != "" && o.XAxis != XIterations && o.XAxis != XEpochs {
		return nil, fmt.Errorf("Plot: x_axis must be %q or %q, got %q", XIterations, XEpochs, o.XAxis)
	}
	p := &Plot{Path: path, Options: o}
	tr := extensions.Triggers{extensions.TriggerAfterEpoch: true, extensions.TriggerAfterTraining: true}
	for k, v := range triggers {
		tr[k] = v
	}
	se, err := extensions.NewSimpleExtension("Plot", func(c extensions.Call) error {
		if p.Off {
			return nil
		}
		if err := Draw(p.Path, c.MainLoop.Log, p.Options); err != nil {
			return err
		}
		if p.Drawn != nil {
			return p.Drawn(p.Path)
		}
		return nil
	}, tr)
	if err != nil {
		return nil, fmt.Errorf("Plot: %w", err)
	}
	p.SimpleExtension = se
	return p, nil
}

// umask is the process's file mode creation mask, read from
// /proc/self/status (setting it to read it would race with files other
// goroutines create); 022 when it cannot be read.
func umask() os.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return os.FileMode(m)
				}
			}
		}
	}
	return 0o022
}
