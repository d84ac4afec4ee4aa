package checkpoint_test

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/checkpoint"
)

// The generators of every draw of the run's random streams travel in the
// checkpoint (random_streams), whichever graph the draws are in, and come
// back in a rebuilt run that made the same draws; a run that made another
// number of draws is refused, and nothing is restored.
func TestRandomStreamsInCheckpoints(t *testing.T) {
	streams := func(draws int) []*core.RandomStreams {
		s := core.NewRandomStreams(11)
		for range draws {
			if _, err := s.Draw(core.DistNormal, 0, 1, nd.Float32, nil); err != nil {
				t.Fatal(err)
			}
		}
		return []*core.RandomStreams{s}
	}
	first, _ := newRegression(9)
	if err := first.Run(); err != nil {
		t.Fatal(err)
	}
	ran := streams(2)
	for _, g := range ran[0].Generators() {
		g.Normal(0, 1) // as if compiled functions had drawn
	}
	ran[0].Generators()[1].Normal(0, 1)
	c, err := checkpoint.Capture(checkpoint.Bindings{Loop: first, RandomStreams: func() []*core.RandomStreams { return ran }}, "after_batch")
	if err != nil {
		t.Fatal(err)
	}
	c.Run.Scripts = []checkpoint.ScriptFile{{Path: "<go>", Source: []byte{}}}
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := checkpoint.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Iteration.RandomStreams) != 2 {
		t.Fatalf("%d stream draws in the checkpoint, want 2", len(d.Iteration.RandomStreams))
	}

	other, _ := newRegression(15)
	wrong := streams(1)
	before := wrong[0].Generators()[0].State()
	err = checkpoint.Restore(checkpoint.Bindings{Loop: other, RandomStreams: func() []*core.RandomStreams { return wrong }}, d, checkpoint.Everything)
	if err == nil || !strings.Contains(err.Error(), "1 random draws from random streams") {
		t.Fatalf("restoring into a run with 1 draw: %v", err)
	}
	if wrong[0].Generators()[0].State() != before {
		t.Error("a refused restore moved a generator")
	}

	resumed, _ := newRegression(15)
	fresh := streams(2)
	if err := checkpoint.Restore(checkpoint.Bindings{Loop: resumed, RandomStreams: func() []*core.RandomStreams { return fresh }}, d, checkpoint.Everything); err != nil {
		t.Fatal(err)
	}
	for i, g := range fresh[0].Generators() {
		if g.State() != ran[0].Generators()[i].State() {
			t.Errorf("draw %d's generator is not where the checkpointed run's was", i)
		}
	}
	diffs, err := checkpoint.Diff(checkpoint.Bindings{Loop: resumed, RandomStreams: func() []*core.RandomStreams { return fresh }}, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range diffs {
		if strings.Contains(l, "random stream") {
			t.Errorf("Diff after Restore: %s", l)
		}
	}
	fresh[0].Generators()[0].Normal(0, 1)
	diffs, _ = checkpoint.Diff(checkpoint.Bindings{Loop: resumed, RandomStreams: func() []*core.RandomStreams { return fresh }}, d)
	if !strings.Contains(strings.Join(diffs, "\n"), "random stream draw 0") {
		t.Errorf("Diff misses a moved draw generator: %q", diffs)
	}
}
