package streams_test

import (
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// A stream of examples, as Fuel's dataset.get_example_stream() gives it
// (no iteration scheme): a Mapping adds a source computed from each
// example, and Batch groups the examples by a ConstantScheme, the last
// batch partial. Each epoch is iterated until io.EOF; a new epoch starts
// the examples over.
func Example_examples() {
	dataset, err := datasets.NewIndexableDataset([]datasets.Source{
		{Name: "x", Data: nd.FromSlice([]float64{1, 2, 3, 4, 5}, 5)},
	}, datasets.IndexableOptions{})
	if err != nil {
		log.Fatal(err)
	}
	examples, err := streams.DataStream(dataset, nil)
	if err != nil {
		log.Fatal(err)
	}
	squared, err := transformers.Mapping(examples, func(ex []*nd.Array) ([]*nd.Array, error) {
		x := ex[0].Flat(0)
		return []*nd.Array{nd.Scalar(nd.Float64, x*x)}, nil
	}, []string{"x_squared"})
	if err != nil {
		log.Fatal(err)
	}
	sizes, err := schemes.ConstantScheme(2, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	batches, err := transformers.Batch(squared, sizes, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sources:", batches.Sources(), "examples:", examples.ProducesExamples(), "batches:", !batches.ProducesExamples())
	for epoch := range 2 {
		it, err := batches.GetEpochIterator()
		if err != nil {
			log.Fatal(err)
		}
		for {
			batch, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(epoch, batch[0].F64(), batch[1].F64())
		}
	}
	// Output:
	// sources: [x x_squared] examples: true batches: true
	// 0 [1 2] [1 4]
	// 0 [3 4] [9 16]
	// 0 [5] [25]
	// 1 [1 2] [1 4]
	// 1 [3 4] [9 16]
	// 1 [5] [25]
}
