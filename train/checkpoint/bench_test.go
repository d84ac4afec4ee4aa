package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// benchCheckpoint is a checkpoint of mb MB of float32 parameters with an
// Adam-like state (two buffers per parameter), and the state's bytes.
func benchCheckpoint(mb int) (*Checkpoint, int) {
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
	return c, state
}

// BenchmarkWrite measures a checkpoint's size and write time (streamed
// encoding, write, fsync, rename) against the bytes of its parameters,
// with an Adam-like state (two buffers per parameter). Reported: bytes of
// the file per byte of parameters+state (overhead/byte) and MB/s.
func BenchmarkWrite(b *testing.B) {
	for _, mb := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("params=%dMB", mb), func(b *testing.B) {
			c, state := benchCheckpoint(mb)
			path := filepath.Join(b.TempDir(), "c.tar")
			b.SetBytes(int64(state))
			cpu0 := processCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := WriteFile(path, c, WriteOptions{KeepLast: 1, PrevIteration: i}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/1e6/float64(b.N)/(float64(state)/1e6), "cpu-ms/MB")
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/float64(state), "file/state")
		})
	}
}

// BenchmarkRead measures Read of a checkpoint of 300 MB of state: its
// rate and its peak memory (the process's peak RSS during the read above
// its RSS before, per byte of state: peak/state; the arrays read are the
// state, so 1 is the floor).
func BenchmarkRead(b *testing.B) {
	c, state := benchCheckpoint(100)
	path := filepath.Join(b.TempDir(), "c.tar")
	if err := WriteFile(path, c, WriteOptions{KeepLast: 1, PrevIteration: -1}); err != nil {
		b.Fatal(err)
	}
	c = nil
	b.SetBytes(int64(state))
	var peak float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		debug.FreeOSMemory()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		base := procStatus("VmRSS:")
		b.StartTimer()
		d, err := Read(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		peak = max(peak, float64(procStatus("VmHWM:")-base)/float64(state))
		runtime.KeepAlive(d)
		b.StartTimer()
	}
	b.ReportMetric(peak, "peak/state")
}

// processCPU is the process's CPU time (user and system) in
// nanoseconds: a write's CPU per MB, which the machine's load distorts
// less than its wall time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func procStatus(field string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
