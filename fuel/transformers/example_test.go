package transformers_test

import (
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// A Fuel pipeline from Go, as Fuel's MNIST pipeline is built: uint8 pixels
// in memory, shuffled batches, scaled to [0, 1] and cast to float32. The
// iterator's position is saved after the first batch and a fresh pipeline
// resumes the epoch from it with the same batches.
func Example_pipeline() {
	pixels := nd.FromSlice([]uint8{0, 51, 102, 153, 204, 255, 0, 255, 51, 204, 102, 153}, 6, 2)
	labels := nd.FromSlice([]int64{0, 1, 2, 0, 1, 2}, 6, 1)
	build := func() fuel.ResumableStream {
		dataset, err := datasets.NewIndexableDataset([]datasets.Source{
			{Name: "features", Data: pixels},
			{Name: "targets", Data: labels},
		}, datasets.IndexableOptions{})
		if err != nil {
			log.Fatal(err)
		}
		scheme, err := schemes.ShuffledScheme(schemes.Range(dataset.NumExamples()), 2, numpyrand.New(1), false)
		if err != nil {
			log.Fatal(err)
		}
		stream, err := streams.DataStream(dataset, scheme)
		if err != nil {
			log.Fatal(err)
		}
		scaled, err := transformers.ScaleAndShift(stream, 1/255.0, 0, []string{"features"})
		if err != nil {
			log.Fatal(err)
		}
		cast, err := transformers.Cast(scaled, "float32", []string{"features"})
		if err != nil {
			log.Fatal(err)
		}
		return cast
	}

	it, err := build().GetEpochIterator()
	if err != nil {
		log.Fatal(err)
	}
	first, err := it.Next()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first batch:", first[0].Shape, first[0].DType(), first[1].I64())
	state, err := it.(fuel.StatefulIterator).State()
	if err != nil {
		log.Fatal(err)
	}
	printRest := func(it fuel.EpochIterator) {
		for {
			batch, err := it.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(batch[0].F32(), batch[1].I64())
		}
	}
	fmt.Println("rest of the epoch:")
	printRest(it)

	// A new pipeline, as a resumed run builds it, continues from the state.
	resumed, err := build().ResumeEpochIterator(state)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resumed:")
	printRest(resumed)
	// Output:
	// first batch: [2 2] float32 [2 1]
	// rest of the epoch:
	// [0.2 0.8 0 0.2] [1 0]
	// [0 1 0.4 0.6] [0 2]
	// resumed:
	// [0.2 0.8 0 0.2] [1 0]
	// [0 1 0.4 0.6] [0 2]
}
