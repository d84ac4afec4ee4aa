package algorithms

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Dropout on microbatches: microbatch k of a step draws its mask from a
// generator seeded with the k-th of K seeds the dropout generator draws at
// that step on every process, so the masks, the parameters and the
// generator's state are the same bits on 1, 2, 3 and 4 processes.
func TestMicrobatchDropoutSameBitsOnAnyNumberOfProcesses(t *testing.T) {
	bs := batches(12, 64)
	bs = append(bs, batches(1, 42)...)
	for _, c := range []struct{ k, procs []int }{{[]int{4, 8}, []int{2, 4}}, {[]int{3, 6}, []int{3}}} {
		for _, k := range c.k {
			testDropoutK(t, bs, k, c.procs)
		}
	}
}

func testDropoutK(t *testing.T, bs []map[string]*nd.Array, k int, procList []int) {
	t.Helper()
	ref := trainNets(t, 1, k, bs, 0.5)[0]
	for _, procs := range procList {
		for r, n := range trainNets(t, procs, k, bs, 0.5) {
			if !sameF32(n.params(), ref.params()) {
				t.Errorf("K=%d, %d processes: rank %d's parameters differ from one process's", k, procs, r)
			}
			for i := range ref.costs {
				if n.costs[i] != ref.costs[i] || n.norms[i] != ref.norms[i] {
					t.Fatalf("K=%d, %d processes, rank %d, step %d: cost %v norm %v, one process %v %v", k, procs, r, i, n.costs[i], n.norms[i], ref.costs[i], ref.norms[i])
				}
			}
			if n.rng.State() != ref.rng.State() {
				t.Errorf("K=%d, %d processes: rank %d's dropout generator is elsewhere than one process's", k, procs, r)
			}
		}
	}
	// The generator moves by exactly K 32-bit draws per step (the
	// seeds), whatever the masks' sizes, so a checkpoint's state is
	// where the uninterrupted run's is.
	want := numpyrand.New(1234)
	for range len(bs) * k {
		want.Randint(0, 1<<32)
	}
	if ref.rng.State() != want.State() {
		t.Errorf("K=%d: the dropout generator is not %d seed draws after its seed", k, len(bs)*k)
	}
	// The masks act: without dropout the parameters differ.
	if sameF32(trainNets(t, 1, k, bs, 0)[0].params(), ref.params()) {
		t.Errorf("K=%d: dropout changed nothing", k)
	}
}
