package streams

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/internal/fixtures"
)

// mnistH5Script writes the full MNIST (70000 examples) in Fuel's layout,
// taking the split attribute's dtype and dimension labels from Fuel's own
// mnist-small.hdf5, then times, as a Fuel user's vectorized loop would,
// reading the training set in batches of 256 with h5py and turning each
// into flattened float32 in [0, 1] with numpy (7 epochs; the median).
const mnistH5Script = `
import gzip, sys, time, numpy, h5py
shared, out = sys.argv[1], sys.argv[2]
def idx(name, off):
    with gzip.open(shared + '/data/mnist/' + name) as f:
        return numpy.frombuffer(f.read(), numpy.uint8, offset=off)
x = numpy.concatenate([idx('train-images-idx3-ubyte.gz', 16), idx('t10k-images-idx3-ubyte.gz', 16)]).reshape(-1, 1, 28, 28)
y = numpy.concatenate([idx('train-labels-idx1-ubyte.gz', 8), idx('t10k-labels-idx1-ubyte.gz', 8)]).reshape(-1, 1)
with h5py.File(shared + '/data/fuel-h5/mnist-small.hdf5', 'r') as small, h5py.File(out, 'w') as f:
    f['features'] = x
    f['targets'] = y
    for name in ('features', 'targets'):
        for i, d in enumerate(small[name].dims):
            f[name].dims[i].label = d.label
    split = small.attrs['split'].copy()
    for row in split:
        train = row['split'] == b'train'
        row['start'], row['stop'] = (0, 60000) if train else (60000, 70000)
    f.attrs['split'] = split
times, cpu = [], []
with h5py.File(out, 'r') as f:
    feats = f['features']
    for epoch in range(7):
        t, c = time.perf_counter(), time.process_time()
        for i in range(0, 60000, 256):
            b = feats[i:i + 256]
            b = (b.reshape(b.shape[0], -1) * (1 / 255.0) + 0.0).astype('float32')
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
print(sorted(times)[3], sorted(cpu)[3])
`

// BenchmarkMNISTStreamVsH5py: MNIST's training set from a Fuel-format
// HDF5 file (read from the file, not loaded in memory) in batches of 256
// through Flatten, ScaleAndShift(1/255, 0) and Cast to float32, against
// the same batches made by h5py + numpy (Debian's /usr/bin/python3), in
// one run. Reports both in examples/s, their ratio, and the ratio of the
// CPU time an epoch takes (Python's time.process_time, Go's getrusage:
// steadier than wall time on a loaded machine).
func BenchmarkMNISTStreamVsH5py(b *testing.B) {
	b.Setenv("FUEL_CONFIG", filepath.Join(b.TempDir(), "none"))
	b.Setenv("FUEL_FLOATX", "")
	path := filepath.Join(b.TempDir(), "mnist.hdf5")
	raw, err := exec.Command("/usr/bin/python3", "-c", mnistH5Script, fixtures.Shared(b, "."), path).CombinedOutput()
	if err != nil {
		b.Skipf("Debian's python3-h5py is needed: %v\n%s", err, raw)
	}
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		b.Fatalf("python said %q", raw)
	}
	pySec, err1 := strconv.ParseFloat(fields[0], 64)
	pyCPU, err2 := strconv.ParseFloat(fields[1], 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("python said %q", raw)
	}
	ds, err := h5.Open(path, []string{"train"}, h5.Options{Sources: []string{"features"}})
	if err != nil {
		b.Fatal(err)
	}
	sch := must(schemes.SequentialScheme(schemes.Range(60000), 256))
	var s fuel.Stream = must(DataStream(ds, sch))
	s = must(transformers.Flatten(s, nil))
	s = must(transformers.ScaleAndShift(s, 1/255.0, 0, nil))
	s = must(transformers.Cast(s, "float32", nil))
	epochs := func(n int) (wall, cpu float64) {
		var times, cpus []time.Duration
		for i := 0; i < n; i++ {
			start, startCPU := time.Now(), cpuTime()
			it := must(s.GetEpochIterator())
			fuel.Lend(it) // releases each batch, as the main loop
			count := 0
			for {
				d, err := it.Next()
				if err != nil {
					break
				}
				count += d[0].Shape[0]
				if d[0].Shape[1] != 784 || d[0].DType().String() != "float32" {
					b.Fatalf("batch %s%v", d[0].DType(), d[0].Shape)
				}
				for _, a := range d {
					a.Release() // done with it, as the main loop after its step
				}
			}
			if count != 60000 {
				b.Fatalf("%d examples, want 60000", count)
			}
			times = append(times, time.Since(start))
			cpus = append(cpus, cpuTime()-startCPU)
		}
		return median(times), median(cpus)
	}
	b.ResetTimer()
	goSec, goCPU := epochs(b.N)
	b.StopTimer()
	// The same with the collector at GOGC=400 (a process setting, restored
	// after): the stream allocates ~235 MB an epoch over a small live heap,
	// so at the default GOGC=100 the collector runs every few batches.
	old := debug.SetGCPercent(400)
	_, goCPU400 := epochs(b.N)
	debug.SetGCPercent(old)
	b.ReportMetric(60000/goSec, "examples/s-go")
	b.ReportMetric(60000/pySec, "examples/s-h5py")
	b.ReportMetric(pySec/goSec, "go/h5py")
	b.ReportMetric(pyCPU/goCPU, "go/h5py-cpu")
	b.ReportMetric(pyCPU/goCPU400, "go/h5py-cpu-gogc400")
	fmt.Fprintf(os.Stderr, "MNIST train epoch, batches of 256 to float32: Go stream %.0f ex/s (%.0f ms CPU; %.0f ms at GOGC=400), h5py+numpy %.0f ex/s (%.0f ms CPU); speed ratio %.2f, CPU-time ratio %.2f (%.2f at GOGC=400)\n",
		60000/goSec, goCPU*1000, goCPU400*1000, 60000/pySec, pyCPU*1000, pySec/goSec, pyCPU/goCPU, pyCPU/goCPU400)
}

func median(d []time.Duration) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Seconds()
}

// cpuTime is the CPU time (user + system) the process has used: less
// disturbed than wall time when other processes load the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
