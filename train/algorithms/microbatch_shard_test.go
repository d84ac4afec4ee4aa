package algorithms

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/parallel"
)

// Processes given only their microbatches' rows of each batch (a sharded
// stream, with BatchSize saying the whole batch's size) train to the
// same bits as one process given whole batches, dropout included.
func TestMicrobatchShardedBatches(t *testing.T) {
	bs := batches(10, 64)
	bs = append(bs, batches(1, 42)...)
	for _, c := range [][2]int{{4, 2}, {4, 4}, {6, 3}} {
		k, procs := c[0], c[1]
		ref := trainNets(t, 1, k, bs, 0.5)[0]
		comms := parallel.NewLocalGroup(procs, 20*time.Second)
		nets := make([]*tinyNet, procs)
		errs := make([]error, procs)
		var wg sync.WaitGroup
		for r := range procs {
			n := 0
			mb := &Microbatching{K: k, Comm: comms[r], BatchSize: func() int { return n }}
			nets[r] = newNet(t, mb, 0.5)
			plan, err := parallel.NewPlan(k, procs, r)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if errs[r] = nets[r].gd.Initialize(); errs[r] != nil {
					return
				}
				for _, b := range bs {
					n = b["x"].Shape[0]
					_, off := parallel.Sizes(n, k)
					mine := map[string]*nd.Array{}
					for k, a := range b {
						mine[k] = a.Slice(off[plan.Lo], off[plan.Hi])
					}
					if errs[r] = nets[r].gd.ProcessBatch(mine); errs[r] != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
		for r, n := range nets {
			if errs[r] != nil {
				t.Fatalf("K=%d, %d processes, rank %d: %v", k, procs, r, errs[r])
			}
			if !sameF32(n.params(), ref.params()) {
				t.Errorf("K=%d, %d processes: rank %d's parameters differ from one process's", k, procs, r)
			}
		}
	}
	// Rows that are not this process's microbatches are refused.
	n := newNet(t, &Microbatching{K: 4, BatchSize: func() int { return 64 }}, 0)
	err := n.train(t, []map[string]*nd.Array{{"x": bs[0]["x"].Slice(0, 60), "y": bs[0]["y"].Slice(0, 60)}})
	if err == nil || !strings.Contains(err.Error(), "got 60 rows of a batch of 64 examples, want the 64 of microbatches 0 to 3") {
		t.Fatalf("got %v", err)
	}
}
