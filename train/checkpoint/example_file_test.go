package checkpoint_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/extensions"
)

// Blocks' Checkpoint and Load extensions from Go, through a file: a run
// saves its state after 9 batches, the file is read back (its manifest
// and parameters are plain data), and a freshly built experiment loads it
// before training and trains on to the uninterrupted run's parameters.
func Example_file() {
	dir, err := os.MkdirTemp("", "checkpoint-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "regression.tar")

	first, w := newRegression(9)
	save, err := checkpoint.NewCheckpointExtension(path, 1, nil, checkpoint.Bindings{},
		extensions.Triggers{"after_training": true})
	if err != nil {
		log.Fatal(err)
	}
	save.Info = func() checkpoint.RunInfo {
		var info checkpoint.RunInfo
		info.Run.Scripts = []checkpoint.ScriptFile{{Path: "<go>", Source: []byte{}}}
		return info
	}
	first.Extensions = append(first.Extensions, save)
	if err := first.Run(); err != nil {
		log.Fatal(err)
	}

	saved, err := checkpoint.Read(path)
	if err != nil {
		log.Fatal(err)
	}
	W := checkpoint.ParametersOf(saved)["W"]
	fmt.Println("saved after", saved.Manifest.IterationsDone, "iterations; W is the run's:", nd.Equal(W.Array, w.Value()))

	uninterrupted, wRef := newRegression(15)
	if err := uninterrupted.Run(); err != nil {
		log.Fatal(err)
	}
	resumed, w2 := newRegression(15)
	// What the file restores replaces the new experiment's initial
	// values: start it elsewhere to show it.
	if err := w2.SetValue(nd.New(nd.Float32, 3, 1)); err != nil {
		log.Fatal(err)
	}
	load, err := checkpoint.NewLoadExtension(path, true, true, checkpoint.Bindings{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	resumed.Extensions = append(resumed.Extensions, load)
	if err := resumed.Run(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("resumed to", resumed.Log.Status.IterationsDone, "iterations; same parameters, bit for bit:", nd.Equal(w2.Value(), wRef.Value()))
	// Output:
	// saved after 9 iterations; W is the run's: true
	// resumed to 15 iterations; same parameters, bit for bit: true
}
