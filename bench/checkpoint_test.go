package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
	"golang.org/x/sys/unix"
)

// checkpointRun is one training run of the checkpoint model: the
// 784-2000-2000-10 MLP with Adam (a 67 MB checkpoint), batches of 128,
// a Checkpoint every `every` batches (0: none) in the background or, with
// sync, written before the callback returns.
type checkpointRun struct {
	wall time.Duration
	// stalls are the times the loop spent in the saves: the save's
	// callback (after_batch) plus, for a background save, the time the
	// next steps' updates waited in write guards for the copy of the
	// arrays they were about to change (loopWait).
	stalls []time.Duration
	// stallCPU are the process's CPU times during the saves' callbacks:
	// what they would take on an idle machine, times its parallelism.
	stallCPU []time.Duration
	// stallThreadCPU are the training loop's thread's CPU times during
	// the saves' callbacks: the callback's own work, without what other
	// threads (the background writer) did meanwhile.
	stallThreadCPU []time.Duration
	// loopWait, loopBytes and copyTime are each background save's time in
	// write guards, the bytes copied there, and the background writer's
	// time copying the rest (checkpoint.SnapshotStats).
	loopWait  []time.Duration
	loopBytes int64
	copyTime  []time.Duration
	// stepAfterSave and stepOther are the wall times of the steps that
	// follow a save (the data, the step, until the next after_batch) and
	// of the other steps: a copy made in the background during the step
	// after a save takes its CPU from that step.
	stepAfterSave, stepOther []time.Duration
	// peakAdded is the peak RSS during the run above the RSS at its start.
	peakAdded int64
	fileSize  int64
}

func runCheckpointed(b *testing.B, dir string, batches, every int, sync bool) checkpointRun {
	b.Helper()
	gd, data := mlpStepRule(b, []int{784, 2000, 2000, 10}, 128, algorithms.NewAdam(nd.Float32, 0.001, 0.9, 0.999, 1e-8, 1-1e-8))
	n := 128 * 10
	features := nd.New(nd.Float32, n, 784)
	targets := nd.New(nd.Int64, n, 1)
	for i := range n {
		copy(features.F32()[i*784:(i+1)*784], data["features"].F32()[(i%128)*784:(i%128+1)*784])
		targets.SetFlat(i, float64(i%10))
	}
	ds, err := datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: features}, {Name: "targets", Data: targets}}, datasets.IndexableOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sch, err := schemes.SequentialScheme(schemes.Range(n), 128)
	if err != nil {
		b.Fatal(err)
	}
	stream, err := streams.DataStream(ds, sch)
	if err != nil {
		b.Fatal(err)
	}
	finish, err := extensions.NewFinishAfter(extensions.Triggers{"after_n_batches": batches})
	if err != nil {
		b.Fatal(err)
	}
	var r checkpointRun
	var t0, lastStop time.Time
	var cpu0, thread0 time.Duration
	var saving bool
	start, err := extensions.NewSimpleExtension("Start", func(c extensions.Call) error {
		if !lastStop.IsZero() {
			if saving {
				r.stepAfterSave = append(r.stepAfterSave, time.Since(lastStop))
			} else {
				r.stepOther = append(r.stepOther, time.Since(lastStop))
			}
		}
		saving = every > 0 && c.MainLoop.Log.Status.IterationsDone%every == 0
		if saving {
			runtime.LockOSThread() // until Stop: the callback's thread
			thread0 = threadCPU()
		}
		t0, cpu0 = time.Now(), processCPU()
		return nil
	}, extensions.Triggers{"after_batch": true})
	if err != nil {
		b.Fatal(err)
	}
	stop, err := extensions.NewSimpleExtension("Stop", func(c extensions.Call) error {
		if saving {
			r.stalls = append(r.stalls, time.Since(t0))
			r.stallCPU = append(r.stallCPU, processCPU()-cpu0)
			r.stallThreadCPU = append(r.stallThreadCPU, threadCPU()-thread0)
			runtime.UnlockOSThread()
		}
		lastStop = time.Now()
		return nil
	}, extensions.Triggers{"after_batch": true})
	if err != nil {
		b.Fatal(err)
	}
	exts := []mainloop.Extension{finish, start}
	path := filepath.Join(dir, "mlp.tar")
	var ck *checkpoint.CheckpointExtension
	if every > 0 {
		ck, err = checkpoint.NewCheckpointExtension(path, 1, nil, checkpoint.Bindings{Namer: bricks.ParameterPath},
			extensions.Triggers{"every_n_batches": every, "after_training": false})
		if err != nil {
			b.Fatal(err)
		}
		ck.Sync = sync
		exts = append(exts, ck)
	}
	exts = append(exts, stop)
	loop := mainloop.New(gd, stream, nil, nil, exts)
	loop.Signals = make(chan os.Signal)
	runtime.GC()
	debug.FreeOSMemory()
	base := resetPeakRSS()
	t := time.Now()
	if err := loop.Run(); err != nil {
		b.Fatal(err)
	}
	r.wall = time.Since(t)
	r.peakAdded = peakRSS() - base
	if ck != nil {
		snaps := ck.Snapshots()
		if !sync && len(snaps) != len(r.stalls) {
			b.Fatalf("%d saves, %d background copies", len(r.stalls), len(snaps))
		}
		for i, s := range snaps {
			r.stalls[i] += s.LoopWait
			r.loopWait = append(r.loopWait, s.LoopWait)
			r.loopBytes += s.LoopBytes
			r.copyTime = append(r.copyTime, s.Copy)
		}
	}
	if fi, err := os.Stat(path); err == nil {
		r.fileSize = fi.Size()
	}
	return r
}

// resetPeakRSS resets the process's peak RSS (VmHWM) to its RSS and
// returns the RSS, in bytes.
func resetPeakRSS() int64 {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return procStatus("VmRSS:")
}

func peakRSS() int64 { return procStatus("VmHWM:") }

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

// processCPU is the process's CPU time so far (CLOCK_PROCESS_CPUTIME_ID:
// exact, where getrusage's user and system split is adjusted in ticks).
func processCPU() time.Duration { return clockCPU(unix.CLOCK_PROCESS_CPUTIME_ID) }

// threadCPU is the calling thread's CPU time so far.
func threadCPU() time.Duration { return clockCPU(unix.CLOCK_THREAD_CPUTIME_ID) }

func clockCPU(clock int32) time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(clock, &ts)
	return time.Duration(ts.Nano())
}

func medianDur(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// ddRate is the disk's write rate for size bytes with dd conv=fsync in
// dir, in MB/s.
func ddRate(b *testing.B, dir string, size int64) float64 {
	f := filepath.Join(dir, "dd.bin")
	defer os.Remove(f)
	t := time.Now()
	out, err := exec.Command("dd", "if=/dev/zero", "of="+f, "bs=1M", fmt.Sprintf("count=%d", (size+1<<20-1)>>20), "conv=fsync").CombinedOutput()
	if err != nil {
		b.Fatalf("dd: %v\n%s", err, out)
	}
	return float64(size) / 1e6 / time.Since(t).Seconds()
}

// BenchmarkCheckpointStall measures what a checkpoint costs the training
// loop (issue 37): the 784-2000-2000-10 MLP with Adam, 60 batches of
// 128, a save every 10 batches. Reported: the median and largest time
// the loop spent in a save (stall-ms, stall-max-ms: the save's callback
// plus the time the next step's update waited for the copy of the state,
// loop-copy-ms) and the CPU time the process spent in the callback
// (stall-cpu-ms: on a loaded machine the wall time is the CPU time
// stretched by the load; it includes what other threads, the background
// writer starting its copy, did meanwhile) and the training loop's thread
// alone (stall-thread-cpu-ms: the callback's own work), the bytes of the state the loop copied itself
// (loop-copied-MB, over all saves: the background writer had not copied
// them when the update came), the writer's copy of the state (copy-ms:
// off the loop's path, but its CPU is taken from the step it overlaps),
// the median wall time of the steps right after a save and of the others
// (step-after-save-ms, step-ms), the wall time a save added to the run
// (added-ms/save: against the same run without saves; on a loaded
// machine this swings), the old synchronous save's time (sync-save-ms)
// and its write rate (write-MB/s: encode, write, fsync, rename) beside
// dd conv=fsync's for a file of the same size in the same directory
// (dd-MB/s), and the peak RSS the saves add (rss-added-MB: the peak of
// the run with background saves above its start, less the same for the
// run without saves).
//
// The files go to BENCH_CHECKPOINT_DIR (default: a directory under the
// package's, on the disk the repository is on; not /tmp, which may be
// memory).
func BenchmarkCheckpointStall(b *testing.B) {
	dir := os.Getenv("BENCH_CHECKPOINT_DIR")
	if dir == "" {
		dir = "."
	}
	dir, err := os.MkdirTemp(dir, "checkpoint-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	batches, every := 60, 10
	for range b.N {
		none := runCheckpointed(b, dir, batches, 0, false)
		bg := runCheckpointed(b, dir, batches, every, false)
		sync := runCheckpointed(b, dir, batches, every, true)
		saves := len(bg.stalls)
		b.ReportMetric(float64(medianDur(bg.stalls))/1e6, "stall-ms")
		b.ReportMetric(float64(slices.Max(bg.stalls))/1e6, "stall-max-ms")
		b.ReportMetric(float64(medianDur(bg.stallCPU))/1e6, "stall-cpu-ms")
		b.ReportMetric(float64(medianDur(bg.stallThreadCPU))/1e6, "stall-thread-cpu-ms")
		b.ReportMetric(float64(medianDur(bg.loopWait))/1e6, "loop-copy-ms")
		b.ReportMetric(float64(bg.loopBytes)/1e6, "loop-copied-MB")
		b.ReportMetric(float64(medianDur(bg.copyTime))/1e6, "copy-ms")
		b.ReportMetric(float64(medianDur(bg.stepAfterSave))/1e6, "step-after-save-ms")
		b.ReportMetric(float64(medianDur(bg.stepOther))/1e6, "step-ms")
		b.ReportMetric(float64(bg.wall-none.wall)/1e6/float64(saves), "added-ms/save")
		b.ReportMetric(float64(medianDur(sync.stalls))/1e6, "sync-save-ms")
		b.ReportMetric(float64(medianDur(sync.stallCPU))/1e6, "writer-cpu-ms")
		b.ReportMetric(float64(sync.fileSize)/1e6/medianDur(sync.stalls).Seconds(), "write-MB/s")
		b.ReportMetric(ddRate(b, dir, sync.fileSize), "dd-MB/s")
		b.ReportMetric(float64(bg.peakAdded-none.peakAdded)/1e6, "rss-added-MB")
		b.ReportMetric(float64(bg.fileSize)/1e6, "file-MB")
		b.Logf("stalls (background) %v, CPU %v (the loop's thread %v), in write guards %v, background copies %v; steps after a save %v; sync saves %v; wall: none %v, background %v, sync %v; peak RSS above start: none %.0f MB, background %.0f MB, sync %.0f MB",
			bg.stalls, bg.stallCPU, bg.stallThreadCPU, bg.loopWait, bg.copyTime, bg.stepAfterSave, sync.stalls, none.wall, bg.wall, sync.wall, float64(none.peakAdded)/1e6, float64(bg.peakAdded)/1e6, float64(sync.peakAdded)/1e6)
	}
}
