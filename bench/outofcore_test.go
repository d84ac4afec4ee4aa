package bench

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// The out-of-core benchmark (issue 37, item 5): H5PYDataset with
// load_in_memory=False reading shuffled batches of 128 from a file of
// BENCH_OOC_MB (default 2048) MB, beside h5py reading the same sorted
// index lists (bench/h5py_read.py), with the file's pages dropped from
// the page cache before each side's read (posix_fadvise DONTNEED after an
// fsync: cold where the kernel honours it).
//
// The file: features (N, 3, 32, 32) uint8 (CIFAR-sized images, 3 KB a
// row) and targets (N, 1) uint8, one split "train". BENCH_OOC_FILE names
// it (kept and reused when it has the right size; default a temporary
// directory's), BENCH_OOC_INDEX the file the batches' sorted index lists
// are written to (int64 little-endian, 128 per batch) for h5py_read.py.

const oocBatch = 128

// oocRows is the number of rows of a file of mb megabytes.
func oocRows(mb int) int { return mb << 20 / (3*32*32 + 1) }

// makeOOCFile writes the benchmark's file at path (rows rows, written a
// part at a time: the writer holds one part) unless a file with that many
// rows is there already, then syncs it.
func makeOOCFile(tb testing.TB, path string, rows int) {
	tb.Helper()
	if d, err := h5.Open(path, []string{"train"}, h5.Options{}); err == nil {
		n := d.NumExamples()
		d.Close()
		if n == rows {
			return
		}
	}
	w, err := h5.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.CreateSource("features", nd.Uint8, []int{rows, 3, 32, 32}, []string{"batch", "channel", "height", "width"}); err != nil {
		tb.Fatal(err)
	}
	if err := w.CreateSource("targets", nd.Uint8, []int{rows, 1}, []string{"batch", "index"}); err != nil {
		tb.Fatal(err)
	}
	const part = 8192
	feat, targ := nd.New(nd.Uint8, part, 3, 32, 32), nd.New(nd.Uint8, part, 1)
	for start := 0; start < rows; start += part {
		n := min(part, rows-start)
		f, t := feat.Data.([]uint8), targ.Data.([]uint8)
		for i := range n {
			row := start + i
			t[i] = uint8(row % 10)
			r := f[i*3072 : (i+1)*3072]
			for j := range r {
				r[j] = uint8(row*7 + j)
			}
		}
		fv, tv := feat, targ
		if n < part {
			fv, tv = feat.Slice(0, n), targ.Slice(0, n)
		}
		if err := w.WriteRows("features", start, fv); err != nil {
			tb.Fatal(err)
		}
		if err := w.WriteRows("targets", start, tv); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.AddSplit(h5.SplitDef{Name: "train", Start: 0, Stop: rows}); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// dropPages writes back and drops path's pages from the page cache; false
// when the kernel refused.
func dropPages(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return false
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) == nil
}

// residentPages is the share of path's pages in the page cache (mincore).
func residentPages(path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return -1
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return -1
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return -1
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return float64(in) / float64(len(vec))
}

// BenchmarkOutOfCore reads b.N shuffled batches of 128 (ShuffledScheme,
// seed 1) of the file through a DataStream over H5PYDataset
// (load_in_memory=False), from cold pages; examples/s and MB/s of rows.
func BenchmarkOutOfCore(b *testing.B) {
	mb := 2048
	if v := os.Getenv("BENCH_OOC_MB"); v != "" {
		var err error
		if mb, err = strconv.Atoi(v); err != nil || mb <= 0 {
			b.Fatalf("BENCH_OOC_MB=%q: want a positive number of MB", v)
		}
	}
	path := os.Getenv("BENCH_OOC_FILE")
	if path == "" {
		path = filepath.Join(b.TempDir(), "ooc.hdf5")
	}
	rows := oocRows(mb)
	makeOOCFile(b, path, rows)

	newScheme := func() *schemes.Shuffled {
		s, err := schemes.ShuffledScheme(schemes.Range(rows), oocBatch, numpyrand.New(1), false)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	// The index lists the stream will request, sorted (as H5PYDataset
	// reads them), for h5py_read.py.
	if ip := os.Getenv("BENCH_OOC_INDEX"); ip != "" {
		it, err := newScheme().GetRequestIterator()
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 0, b.N*oocBatch*8)
		for range b.N {
			req, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			list := slices.Clone(req.Indices)
			slices.Sort(list)
			for _, i := range list {
				buf = binary.LittleEndian.AppendUint64(buf, uint64(i))
			}
		}
		if err := os.WriteFile(ip, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cold := dropPages(path)
	resident := residentPages(path)

	b.ResetTimer()
	d, err := h5.Open(path, []string{"train"}, h5.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s, err := streams.DataStream(d, newScheme())
	if err != nil {
		b.Fatal(err)
	}
	it, err := s.GetEpochIterator()
	if err != nil {
		b.Fatal(err)
	}
	fuel.Lend(it)
	examples := 0
	for range b.N {
		batch, err := it.Next()
		if errors.Is(err, io.EOF) {
			b.Fatalf("the epoch ended after %d examples", examples)
		}
		if err != nil {
			b.Fatal(err)
		}
		if batch[0].Shape[0] != oocBatch || batch[0].DType() != nd.Uint8 {
			b.Fatalf("batch %s%v", batch[0].DType(), batch[0].Shape)
		}
		examples += batch[0].Shape[0]
		for _, a := range batch {
			a.Release()
		}
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(examples)/secs, "examples/s")
	b.ReportMetric(float64(examples)*3073/secs/1e6, "MB/s")
	b.ReportMetric(resident*100, "%-resident-before")
	if !cold {
		b.Log("the file's pages could not be dropped: the read may be warm")
	}
}
