package checkpoint_test

import (
	"fmt"
	"log"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// newRegression builds the same experiment every time it is called, as a
// script does when it is run again: a linear regression y = xW trained by
// Adam on shuffled batches of 7 out of 40 examples, stopping after the
// given number of batches.
func newRegression(batches int) (*mainloop.MainLoop, *core.Variable) {
	rng := numpyrand.New(3)
	xs := make([]float32, 40*3)
	ys := make([]float32, 40)
	for i := range xs {
		xs[i] = float32(rng.StandardNormal())
	}
	for i := range ys {
		ys[i] = xs[3*i] - 2*xs[3*i+1]
	}
	dataset, err := datasets.NewIndexableDataset([]datasets.Source{
		{Name: "x", Data: nd.FromSlice(xs, 40, 3)},
		{Name: "y", Data: nd.FromSlice(ys, 40, 1)},
	}, datasets.IndexableOptions{})
	if err != nil {
		log.Fatal(err)
	}
	scheme, err := schemes.ShuffledScheme(schemes.Range(40), 7, numpyrand.New(1), false)
	if err != nil {
		log.Fatal(err)
	}
	stream, err := streams.DataStream(dataset, scheme)
	if err != nil {
		log.Fatal(err)
	}
	x := core.NewInput("x", nd.Float32, 2)
	y := core.NewInput("y", nd.Float32, 2)
	w := core.NewShared(nd.FromSlice([]float32{0.1, -0.2, 0.3}, 3, 1), "W")
	prediction, err := core.Dot(x, w)
	if err != nil {
		log.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(prediction, y)))
	algorithm, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{
		Cost: cost, Parameters: []*core.Variable{w},
		StepRule: algorithms.NewAdam(nd.Float32, 0.05, 0.9, 0.999, 1e-8, 1-1e-8),
	})
	if err != nil {
		log.Fatal(err)
	}
	finish, err := extensions.NewFinishAfter(extensions.Triggers{"after_n_batches": batches})
	if err != nil {
		log.Fatal(err)
	}
	return mainloop.New(algorithm, stream, nil, nil, []mainloop.Extension{finish}), w
}

// A checkpoint round trip: a run stopped in the middle of its second epoch
// is captured, encoded to bytes (what a checkpoint file holds), decoded and
// restored into a freshly built experiment, which then trains on. The
// result is the uninterrupted run's, bit for bit: the parameters, Adam's
// buffers, the log and the shuffled scheme's position and generator all
// travel in the checkpoint.
func Example_roundTrip() {
	uninterrupted, wRef := newRegression(15)
	if err := uninterrupted.Run(); err != nil {
		log.Fatal(err)
	}

	first, _ := newRegression(9) // 6 batches an epoch: stops mid-epoch
	if err := first.Run(); err != nil {
		log.Fatal(err)
	}
	captured, err := checkpoint.Capture(checkpoint.Bindings{Loop: first}, "after_batch")
	if err != nil {
		log.Fatal(err)
	}
	captured.Run.Scripts = []checkpoint.ScriptFile{{Path: "<go>", Source: []byte{}}}
	data, err := captured.Encode()
	if err != nil {
		log.Fatal(err)
	}

	decoded, err := checkpoint.Decode(data)
	if err != nil {
		log.Fatal(err)
	}
	resumed, w := newRegression(15)
	if err := checkpoint.Restore(checkpoint.Bindings{Loop: resumed}, decoded, checkpoint.Everything); err != nil {
		log.Fatal(err)
	}
	// As after Blocks' Load extension, the resumed loop runs
	// before_training again and then continues the epoch in progress.
	resumed.Log.Status.TrainingStarted = false
	if err := resumed.Run(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("iterations done:", decoded.Manifest.IterationsDone, "then", resumed.Log.Status.IterationsDone)
	fmt.Println("same parameters, bit for bit:", nd.Equal(w.Value(), wRef.Value()))
	// Output:
	// iterations done: 9 then 15
	// same parameters, bit for bit: true
}
