package datasets

// The acceptance tests of the datasets: checks against the real, full
// MNIST files, which make accept passes (BLOCKS_SHARED, BLOCKS_ACCEPT=1).

import (
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/nd"
)

// The embedded subset holds exactly the real MNIST's first 5000 training
// and 1000 test examples.
func TestAcceptEmbeddedMNISTMatchesFullFiles(t *testing.T) {
	useDataPath(t, fixtures.Shared(t, "data/mnist"))
	for split, n := range map[string]int{"train": EmbeddedMNISTTrain, "test": EmbeddedMNISTTest} {
		emb := must(EmbeddedMNIST([]string{split}, MNISTOptions{}))
		full := must(MNIST([]string{split}, MNISTOptions{Subset: SliceSubset(0, n)}))
		if emb.NumExamples() != n || !emb.Embedded() {
			t.Errorf("embedded %s: %d examples", split, emb.NumExamples())
		}
		a := must(emb.GetData(fuel.Request{Start: 0, Stop: n}))
		b := must(full.GetData(fuel.Request{Start: 0, Stop: n}))
		for k := range a {
			if !nd.Equal(a[k], b[k]) {
				t.Errorf("embedded %s source %d differs from the full files' first %d examples", split, k, n)
			}
		}
	}
}

// The real MNIST files: known sizes and values, and the sums of their
// bytes that numpy computes.
func TestAcceptReadIDXMNISTFiles(t *testing.T) {
	checkMNISTFiles(t, fixtures.Shared(t, "data/mnist"), true)
}
