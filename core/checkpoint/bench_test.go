package checkpoint

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// BenchmarkWrite measures a checkpoint's size and write time (encode,
// write, fsync, rename) against the bytes of its parameters, with an
// Adam-like state (two buffers per parameter). Reported: bytes of the
// file per byte of parameters+state (overhead/byte) and MB/s.
func BenchmarkWrite(b *testing.B) {
	for _, mb := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("params=%dMB", mb), func(b *testing.B) {
			n := mb << 20 / 4 / 4 // four float32 parameters
			c := &Checkpoint{Run: RunConfig{Scripts: []ScriptFile{{Path: "/x/exp.star", Source: make([]byte, 2000)}}}}
			state := 0
			for i := 0; i < 4; i++ {
				p := nd.New(nd.Float32, n)
				for j := range p.F32() {
					p.F32()[j] = float32(j) * 1e-3
				}
				c.Parameters = append(c.Parameters, Named{fmt.Sprintf("|mlp|linear_%d.W", i), p})
				c.AlgorithmState = append(c.AlgorithmState, Named{fmt.Sprintf("%03d:mean", 2*i), p}, Named{fmt.Sprintf("%03d:variance", 2*i+1), p})
				state += 3 * n * 4
			}
			path := filepath.Join(b.TempDir(), "c.tar")
			var size int
			b.SetBytes(int64(state))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				data, err := c.Encode()
				if err != nil {
					b.Fatal(err)
				}
				size = len(data)
				if err := Write(path, data, WriteOptions{KeepLast: 1, PrevIteration: i}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size)/float64(state), "file/state")
		})
	}
}
