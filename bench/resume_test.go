package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/mainloop"
	"golang.org/x/sys/unix"
)

// resumeDims is the benchmark's model: a 784-6400-6400-6400-10 MLP, 348
// MB of parameters, 1.04 GB of state with Adam's two buffers.
var resumeDims = []int{784, 6400, 6400, 6400, 10}

// resumeModel builds the model with Adam and a main loop over a tiny
// stream: what a resumed script has built when it restores.
func resumeModel(b *testing.B) checkpoint.Bindings {
	b.Helper()
	gd, _ := mlpStepRule(b, resumeDims, 4, algorithms.NewAdam(nd.Float32, 0.001, 0.9, 0.999, 1e-8, 1-1e-8))
	ds, err := datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: nd.New(nd.Float32, 4, 784)}, {Name: "targets", Data: nd.New(nd.Int64, 4, 1)}}, datasets.IndexableOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sch, err := schemes.SequentialScheme(schemes.Range(4), 4)
	if err != nil {
		b.Fatal(err)
	}
	stream, err := streams.DataStream(ds, sch)
	if err != nil {
		b.Fatal(err)
	}
	return checkpoint.Bindings{Loop: mainloop.New(gd, stream, nil, nil, nil), Namer: bricks.ParameterPath}
}

// resumeValue is the k-th saved array's j-th element.
func resumeValue(k, j int) float32 { return float32((j*31+k*7)%1000)*1e-3 - 0.5 }

// BenchmarkResume resumes a checkpoint of a 1 GB state (resumeDims with
// Adam) as blocks-repl resume does: the model is built, the checkpoint
// read (its pages dropped from the page cache first, posix_fadvise
// DONTNEED) and the state restored into it. Reported: seconds of Read
// and Restore (not the model's building: the script's own time), the
// model's RSS once built (model/state: its arrays are 1, the rest its
// own) and the peak RSS the resume adds above it (added/state), per byte
// of state: the resume's peak is their sum. mode=deferred is the
// resume's way (ReadDeferred: the arrays read straight into the
// model's), mode=read-copy reading them whole then copying (Read). The
// restored values are checked bit for bit.
func BenchmarkResume(b *testing.B) {
	path := filepath.Join(b.TempDir(), "c.tar")
	var state int64
	{
		bd := resumeModel(b)
		c, err := checkpoint.Capture(bd, "after_batch")
		if err != nil {
			b.Fatal(err)
		}
		for k, na := range append(append([]checkpoint.Named(nil), c.Parameters...), c.AlgorithmState...) {
			if na.Array.DType() != nd.Float32 {
				continue
			}
			for j := range na.Array.F32() {
				na.Array.F32()[j] = resumeValue(k, j)
			}
			state += int64(na.Array.Size()) * 4
		}
		c.Run.Scripts = []checkpoint.ScriptFile{{Path: "<go>", Source: []byte{}}}
		if err := checkpoint.WriteFile(path, c, checkpoint.WriteOptions{PrevIteration: -1}); err != nil {
			b.Fatal(err)
		}
	}
	{
		// The floors: the model built alone (its peak RSS per byte of
		// state), and the file read from the disk (4 MB reads, no CPU).
		runtime.GC()
		debug.FreeOSMemory()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		base := procStatus("VmRSS:")
		bd := resumeModel(b)
		b.Logf("the model built alone: peak RSS %.3f x the state", float64(procStatus("VmHWM:")-base)/float64(state))
		runtime.KeepAlive(bd)
		dropPageCache(b, path)
		t0 := time.Now()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 4<<20)
		n := int64(0)
		for {
			k, err := f.Read(buf)
			n += int64(k)
			if err != nil {
				break
			}
		}
		f.Close()
		b.Logf("the file read from the disk: %.2f s (%.0f MB/s)", time.Since(t0).Seconds(), float64(n)/1e6/time.Since(t0).Seconds())
	}
	for _, mode := range []string{"deferred", "read-copy"} {
		b.Run("mode="+mode, func(b *testing.B) {
			read := checkpoint.ReadDeferred
			if mode == "read-copy" {
				read = checkpoint.Read
			}
			var secs, readS, restoreS, cpuS, model, peak float64
			for i := 0; i < b.N; i++ {
				dropPageCache(b, path)
				runtime.GC()
				debug.FreeOSMemory()
				base0 := procStatus("VmRSS:")
				// The model first (the script's own memory, its garbage
				// collected), then the resume's: what it adds.
				bd := resumeModel(b)
				runtime.GC()
				debug.FreeOSMemory()
				_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
				base := procStatus("VmRSS:")
				model = float64(base-base0) / float64(state)
				t0, cpu0 := time.Now(), processCPU()
				c, err := read(path)
				if err != nil {
					b.Fatal(err)
				}
				tRead, cpuRead := time.Since(t0), processCPU()-cpu0
				t1, cpu1 := time.Now(), processCPU()
				if err := checkpoint.Restore(bd, c, checkpoint.What{Parameters: true, AlgorithmState: true}); err != nil {
					b.Fatal(err)
				}
				tRestore := time.Since(t1)
				cpuS = (cpuRead + processCPU() - cpu1).Seconds()
				secs, readS, restoreS = (tRead + tRestore).Seconds(), tRead.Seconds(), tRestore.Seconds()
				peak = float64(procStatus("VmHWM:")-base) / float64(state)
				got, err := checkpoint.Capture(bd, "after_batch")
				if err != nil {
					b.Fatal(err)
				}
				for k, na := range append(append([]checkpoint.Named(nil), got.Parameters...), got.AlgorithmState...) {
					if na.Array.DType() != nd.Float32 {
						continue
					}
					for j, v := range na.Array.F32() {
						if v != resumeValue(k, j) {
							b.Fatalf("%s[%d] resumed as %v, saved %v", na.Name, j, v, resumeValue(k, j))
						}
					}
				}
				runtime.KeepAlive(c)
			}
			b.ReportMetric(float64(state)/1e9, "state-GB")
			b.ReportMetric(secs, "resume-s")
			b.ReportMetric(cpuS, "cpu-s")
			b.ReportMetric(readS, "read-s")
			b.ReportMetric(restoreS, "restore-s")
			b.ReportMetric(peak, "added/state")
			b.ReportMetric(model, "model/state")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// dropPageCache drops the file's pages from the page cache (they are
// clean: the file was synced), so that it is read from the disk.
func dropPageCache(b *testing.B, path string) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		fmt.Fprintf(os.Stderr, "BenchmarkResume: the page cache could not be dropped (%v): the read may be from memory\n", err)
	}
}
