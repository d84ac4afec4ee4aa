package scripts

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/blocks-go/blocks/internal/fixtures"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	"github.com/blocks-go/blocks/train/mainloop"
)

// sampler records, after each epoch, the live heap (after a collection),
// the goroutines and the open file descriptors.
type sampler struct {
	mainloop.TrainingExtension
	heap, goroutines, fds []int
}

func (s *sampler) AfterEpoch() error {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	s.heap = append(s.heap, int(ms.HeapAlloc))
	s.goroutines = append(s.goroutines, runtime.NumGoroutine())
	s.fds = append(s.fds, len(entries))
	return nil
}

// TestSoak (make soak) trains the tutorial model for BLOCKS_SOAK_EPOCHS
// epochs (default 20) with monitoring and checks that nothing grows
// without bound: after the first quarter of the run (warm-up: plans,
// caches), the live heap stays within 10% + 4 MiB of its level then, and
// the goroutines and file descriptors do not grow at all.
func TestSoak(t *testing.T) {
	if os.Getenv("BLOCKS_SOAK") == "" {
		t.Skip("make soak runs this (BLOCKS_SOAK=1)")
	}
	epochs := 20
	if e := os.Getenv("BLOCKS_SOAK_EPOCHS"); e != "" {
		fmt.Sscan(e, &epochs)
	}
	t.Setenv("FUEL_DATA_PATH", fixtures.Shared(t, "data/mnist"))
	g, _ := run(t, "soak.star", map[string]string{"epochs": fmt.Sprint(epochs)})
	ml := g["main_loop"].(*starblocks.MainLoop).M
	s := &sampler{}
	ml.Extensions = append(ml.Extensions, s)
	if err := ml.Run(); err != nil {
		t.Fatal(err)
	}
	t.Logf("epoch  heap(MiB)  goroutines  fds  test_error_rate")
	for i := range s.heap {
		row, _ := ml.Log.Lookup(ml.Log.Status.EpochEnds[i])
		t.Logf("%5d  %9.2f  %10d  %3d  %v", i+1, float64(s.heap[i])/(1<<20), s.goroutines[i], s.fds[i], row["test_error_rate"])
	}
	if len(s.heap) != epochs {
		t.Fatalf("sampled %d epochs, want %d", len(s.heap), epochs)
	}
	ref := epochs / 4
	for i := ref + 1; i < epochs; i++ {
		if limit := float64(s.heap[ref])*1.1 + 4<<20; float64(s.heap[i]) > limit {
			t.Errorf("epoch %d: live heap %d B, more than %0.f B (epoch %d's level + 10%% + 4 MiB)", i+1, s.heap[i], limit, ref+1)
		}
		if s.goroutines[i] > s.goroutines[ref] {
			t.Errorf("epoch %d: %d goroutines, %d at epoch %d", i+1, s.goroutines[i], s.goroutines[ref], ref+1)
		}
		if s.fds[i] > s.fds[ref] {
			t.Errorf("epoch %d: %d open files, %d at epoch %d", i+1, s.fds[i], s.fds[ref], ref+1)
		}
	}
}
