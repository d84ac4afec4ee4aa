package plot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/mainloop"
)

// trainingLikeLog has 5 epochs of 20 iterations: a decaying train_cost
// after every batch, a test_cost and a learning rate at every epoch end.
func trainingLikeLog() *mainloop.TrainingLog {
	l := mainloop.NewTrainingLog()
	r0, _ := l.Row(0)
	r0["test_cost"] = nd.Scalar(nd.Float32, 2.3)
	for it := 1; it <= 100; it++ {
		r, _ := l.Row(it)
		r["train_cost"] = 2.3*math.Exp(-float64(it)/30) + 0.1*math.Sin(float64(it))
		if it%20 == 0 {
			r["test_cost"] = nd.Scalar(nd.Float32, 2.3*math.Exp(-float64(it)/35)+0.05)
			r["learning_rate"] = 0.1 / float64(it/20)
			l.Status.EpochEnds = append(l.Status.EpochEnds, it)
		}
	}
	l.Status.IterationsDone, l.Status.EpochsDone = 100, 5
	return l
}

// TestPNG draws two panels to a PNG and checks that it decodes, has the
// asked size, and is not blank: many non-white pixels, and pixels of the
// first two line colours.
func TestPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curves.png")
	o := Options{Title: "MNIST, Adam", Channels: [][]string{{"train_cost", "test_cost"}, {"learning_rate"}}, Width: 640, Height: 600}
	if err := Draw(path, trainingLikeLog(), o); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("BLOCKS_PLOT_KEEP"); dir != "" {
		b, _ := os.ReadFile(path)
		_ = os.WriteFile(filepath.Join(dir, "curves.png"), b, 0o644)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 600 {
		t.Fatalf("size %v, want 640×600", b)
	}
	nonWhite, blue, orange := 0, 0, 0
	for y := 0; y < 600; y++ {
		for x := 0; x < 640; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R < 240 || c.G < 240 || c.B < 240 {
				nonWhite++
			}
			if near(c, palette[0]) {
				blue++
			}
			if near(c, palette[1]) {
				orange++
			}
		}
	}
	// Axes, text and two panels of curves: well above 1% of the image;
	// each curve colour is drawn (lines 1.5 pt wide over most of the
	// panel width).
	if nonWhite < 640*600/100 || blue < 300 || orange < 100 {
		t.Errorf("image looks blank: %d non-white pixels, %d blue, %d orange", nonWhite, blue, orange)
	}
	_ = image.Point{}
}

func near(c color.RGBA, p color.Color) bool {
	q := color.RGBAModel.Convert(p).(color.RGBA)
	d := func(a, b uint8) int {
		if a > b {
			return int(a - b)
		}
		return int(b - a)
	}
	return d(c.R, q.R) < 20 && d(c.G, q.G) < 20 && d(c.B, q.B) < 20
}

func TestSVGAndEpochAxis(t *testing.T) {
	var b bytes.Buffer
	l := trainingLikeLog()
	if err := Render(&b, "svg", l, Options{Title: "t", Channels: [][]string{{"test_cost"}}, XAxis: XEpochs}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.HasPrefix(strings.TrimSpace(s), "<?xml") || !strings.Contains(s, "<svg") || !strings.Contains(s, "epochs") || !strings.Contains(s, "test_cost") {
		t.Errorf("svg lacks its parts: %.300s", s)
	}
	for it, want := range map[int]float64{0: 0, 20: 1, 30: 1.5, 100: 5, 110: 5.5} {
		if got := EpochOf(l, it); got != want {
			t.Errorf("EpochOf(%d) = %v, want %v", it, got, want)
		}
	}
	if err := Render(&b, "png", l, Options{Channels: [][]string{{"x"}}, XAxis: "time"}); err == nil {
		t.Error("bad x axis: no error")
	}
	if got := NumericChannels(l); strings.Join(got, ",") != "learning_rate,test_cost,train_cost" {
		t.Errorf("numeric channels %v", got)
	}
}
