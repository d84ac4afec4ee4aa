package plot

import (
	"image/png"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

type stream struct{}

func (stream) Sources() []string               { return []string{"x"} }
func (stream) AxisLabels() map[string][]string { return nil }
func (stream) ProducesExamples() bool          { return false }
func (stream) GetEpochIterator() (fuel.EpochIterator, error) {
	return &iter{}, nil
}

type iter struct{ i int }

func (it *iter) Next() ([]*nd.Array, error) {
	if it.i == 3 {
		return nil, io.EOF
	}
	it.i++
	return []*nd.Array{nd.Scalar(nd.Float32, 1)}, nil
}

type nop struct{}

func (nop) Initialize() error                       { return nil }
func (nop) ProcessBatch(map[string]*nd.Array) error { return nil }

// TestPlotExtensionRefreshes: the Plot extension redraws its file after
// every epoch; an extension after it reads the image each time and sees
// one more point (a growing file).
func TestPlotExtensionRefreshes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.png")
	rec, err := extensions.NewSimpleExtension("rec", func(c extensions.Call) error {
		c.MainLoop.Log.CurrentRow()["cost"] = 1 / float64(c.MainLoop.Status().IterationsDone)
		return nil
	}, extensions.Triggers{"after_batch": true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlot(path, Options{Title: "live", Channels: [][]string{{"cost"}}, XAxis: XEpochs, Width: 300, Height: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	check, _ := extensions.NewSimpleExtension("check", func(c extensions.Call) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := png.Decode(f); err != nil {
			return err
		}
		seen = append(seen, c.MainLoop.Status().EpochsDone)
		return nil
	}, extensions.Triggers{"after_epoch": true})
	finish, _ := extensions.NewFinishAfter(extensions.Triggers{"after_n_epochs": 3})
	m := mainloop.New(nop{}, stream{}, nil, nil, []mainloop.Extension{rec, p, check, finish})
	if err := m.Run(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Errorf("image read after epochs %v", seen)
	}
	if _, err := NewPlot(path, Options{}, nil); err == nil {
		t.Error("no channels: no error")
	}
}
