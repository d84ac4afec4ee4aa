package main

import (
	"image/color"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// scalingPlot draws examples/s against batch size and against hidden size
// (log-log), here and PyTorch, side by side in one PNG.
func scalingPlot(path string, ours, theirs map[[2]int][]float64) error {
	panel := func(title, xlabel string, cs [][2]int, x func([2]int) int) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = xlabel
		p.Y.Label.Text = "examples/s"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		var ticks []plot.Tick
		for _, c := range cs {
			ticks = append(ticks, plot.Tick{Value: float64(x(c)), Label: strconv.Itoa(x(c))})
		}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(ticks), plot.LogTicks{Prec: -1}
		p.Legend.Top = true
		for k, src := range []map[[2]int][]float64{ours, theirs} {
			pts := make(plotter.XYs, len(cs))
			for i, c := range cs {
				pts[i].X, pts[i].Y = float64(x(c)), median(src[c])
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			col := []color.Color{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 255}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 255}}[k]
			l.Color, s.Color = col, col
			p.Add(l, s)
			p.Legend.Add([]string{"blocks-go", "PyTorch"}[k], l, s)
		}
		return p, nil
	}
	p1, err := panel("MLP 784-500-10: batch size", "batch size", byBatch, func(c [2]int) int { return c[0] })
	if err != nil {
		return err
	}
	p2, err := panel("MLP 784-h-10, batch 256: hidden size", "hidden units h", byHidden, func(c [2]int) int { return c[1] })
	if err != nil {
		return err
	}
	img := vgimg.New(12*vg.Inch, 4.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadY: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{{p1, p2}}, tiles, dc)
	p1.Draw(canvases[0][0])
	p2.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
