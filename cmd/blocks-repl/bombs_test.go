package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/mainloop"
)

// smallCheckpoint is a valid checkpoint, encoded.
func smallCheckpoint(t *testing.T) []byte {
	t.Helper()
	log := mainloop.NewTrainingLog()
	log.Status.IterationsDone = 3
	st := numpyrand.New(7).State()
	c := &checkpoint.Checkpoint{
		Run: checkpoint.RunConfig{FloatX: "float32", DefaultSeed: 1,
			Scripts: []checkpoint.ScriptFile{{Path: "/x/exp.star", Source: []byte("print(1)\n")}}},
		Parameters: []checkpoint.Named{{Name: "|mlp|W", Array: nd.FromSlice([]float32{1, 2, 3, 4}, 2, 2)}},
		Iteration:  checkpoint.IterationState{Callback: "after_batch", StreamRNGs: []checkpoint.RNGState{{Owner: "ShuffledScheme", State: st}}},
		Log:        checkpoint.EncodeLog(log),
	}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// resealMember replaces the member called name of a checkpoint and
// recomputes the manifest's size and SHA-256 and its checksum, so that
// the forged content gets past the integrity checks.
func resealMember(t *testing.T, good []byte, name string, content []byte) []byte {
	t.Helper()
	return reseal(t, good, func(man *checkpoint.Manifest, names []string, datas [][]byte) {
		for i, n := range names {
			if n == name {
				datas[i] = content
				sum := sha256.Sum256(content)
				man.Members[i-1].Size = int64(len(content))
				man.Members[i-1].SHA256 = hex.EncodeToString(sum[:])
				return
			}
		}
		t.Fatalf("no member %s", name)
	})
}

// resealManifest edits a checkpoint's manifest (its recorded command
// line, say) and recomputes its checksum, as anyone can.
func resealManifest(t *testing.T, good []byte, edit func(man *checkpoint.Manifest)) []byte {
	t.Helper()
	return reseal(t, good, func(man *checkpoint.Manifest, _ []string, _ [][]byte) { edit(man) })
}

// reseal rewrites a checkpoint after edit changed its manifest or its
// members' contents (names[0] is the manifest, the last member its
// checksum), recomputing the manifest and the checksum.
func reseal(t *testing.T, good []byte, edit func(man *checkpoint.Manifest, names []string, datas [][]byte)) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(good))
	var names []string
	var datas [][]byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		names, datas = append(names, h.Name), append(datas, b)
	}
	var man checkpoint.Manifest
	if err := json.Unmarshal(datas[0], &man); err != nil {
		t.Fatal(err)
	}
	edit(&man, names, datas)
	datas[0], _ = json.Marshal(man)
	ms := sha256.Sum256(datas[0])
	datas[len(datas)-1] = []byte(hex.EncodeToString(ms[:]) + "\n")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, n := range names {
		_ = tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(datas[i])), Typeflag: tar.TypeReg})
		_, _ = tw.Write(datas[i])
	}
	_ = tw.Close()
	return buf.Bytes()
}

// gnuSparseMember is an old-GNU sparse tar member (typeflag 'S') of
// realSize bytes, all holes but its last byte: 1 KiB on disk.
func gnuSparseMember(name string, realSize int64) []byte {
	h := make([]byte, 512)
	copy(h, name)
	octal := func(off, n int, v int64) { copy(h[off:off+n], fmt.Sprintf("%0*o", n-1, v)) }
	octal(100, 8, 0o644)
	octal(108, 8, 0)
	octal(116, 8, 0)
	octal(124, 12, 1) // one stored byte
	octal(136, 12, 0)
	h[156] = 'S'
	copy(h[257:], "ustar  \x00")
	octal(386, 12, realSize-1) // sparse entry 0: offset
	octal(398, 12, 1)          // sparse entry 0: bytes
	octal(483, 12, realSize)   // real size
	copy(h[148:156], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
	data := make([]byte, 512)
	data[0] = '}'
	return append(append(h, data...), make([]byte, 1024)...)
}

// runInspect runs blocks-repl inspect on a file holding data and returns
// its status, stderr and peak resident memory in MiB.
func runInspect(t *testing.T, data []byte) (int, string, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bomb.tar")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "inspect", p)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss / 1024
	return code, errb.String(), rss
}

// TestCheckpointBombsRefused: a 30 KB checkpoint with a sparse member
// drove inspect to 1.25 GB before any check; a deflate bomb in the
// parameters' .npz reached 2.1 GB. Both are refused now, in a few MiB.
func TestCheckpointBombsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	t.Run("sparse", func(t *testing.T) {
		code, stderr, rss := runInspect(t, gnuSparseMember("manifest.json", 4<<30))
		noGoTrace(t, stderr)
		if code != 1 || !strings.Contains(stderr, "not a valid checkpoint") {
			t.Errorf("status %d, stderr:\n%s", code, stderr)
		}
		if rss > 200 {
			t.Errorf("inspect peaked at %d MiB on a 2 KiB file", rss)
		}
	})
	t.Run("pax-sparse", func(t *testing.T) {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		_ = tw.WriteHeader(&tar.Header{Name: "manifest.json", Size: 2, Typeflag: tar.TypeReg, Format: tar.FormatPAX,
			PAXRecords: map[string]string{"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "manifest.json", "GNU.sparse.realsize": "4294967296"}})
		_, _ = tw.Write([]byte("{}"))
		_ = tw.Close()
		code, stderr, rss := runInspect(t, buf.Bytes())
		noGoTrace(t, stderr)
		if code != 1 || !strings.Contains(stderr, "not a valid checkpoint") {
			t.Errorf("status %d, stderr:\n%s", code, stderr)
		}
		if rss > 200 {
			t.Errorf("inspect peaked at %d MiB on a small file", rss)
		}
	})
	t.Run("deflate", func(t *testing.T) {
		// A 2-element float32 array whose deflated stream inflates to
		// 256 MiB of zeros.
		var zbuf bytes.Buffer
		zw := zip.NewWriter(&zbuf)
		zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestCompression) })
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "|mlp|W.npy", Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		hdr := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
		hdr += strings.Repeat(" ", (64-(10+len(hdr)+1)%64)%64) + "\n"
		npy := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
		_, _ = w.Write(append(npy, hdr...))
		zero := make([]byte, 1<<20)
		for range 256 {
			_, _ = w.Write(zero)
		}
		_ = zw.Close()
		data := resealMember(t, smallCheckpoint(t), checkpoint.MemberParameters, zbuf.Bytes())
		code, stderr, rss := runInspect(t, data)
		noGoTrace(t, stderr)
		if code != 1 || !strings.Contains(stderr, "_parameters") {
			t.Errorf("status %d, stderr:\n%s", code, stderr)
		}
		if rss > 200 {
			t.Errorf("inspect peaked at %d MiB on a %d KiB file", rss, len(data)>>10)
		}
	})
	t.Run("short-rng-key", func(t *testing.T) {
		it := `{"callback":"after_batch","stream_rngs":[{"owner":"ShuffledScheme","state":{"Key":[1,2,3,4,5,6,7,8,9,10],"Pos":624,"HasGauss":false,"Gauss":0}}],"random_ops":[]}`
		code, stderr, _ := runInspect(t, resealMember(t, smallCheckpoint(t), checkpoint.MemberIterationState, []byte(it)))
		noGoTrace(t, stderr)
		if code != 1 || !strings.Contains(stderr, "a key of 10 words, not 624") {
			t.Errorf("status %d, stderr:\n%s", code, stderr)
		}
	})
	t.Run("valid", func(t *testing.T) {
		code, stderr, _ := runInspect(t, smallCheckpoint(t))
		if code != 0 {
			t.Errorf("status %d on a valid checkpoint: %s", code, stderr)
		}
	})
}

// pyEmptyH5 makes an HDF5 file whose one source, features, declares the
// given shape of uint8 and is never written (a few KiB on disk), with
// Fuel's split attribute covering all of its rows.
const pyEmptyH5 = `
import sys, h5py, numpy
path, shape = sys.argv[1], tuple(int(x) for x in sys.argv[2:])
f = h5py.File(path, 'w')
f.create_dataset('features', shape, dtype='uint8', chunks=tuple([1] * (len(shape) - 1) + [min(shape[-1], 4)]))
split = numpy.empty(1, dtype=[('split', 'a5'), ('source', 'a8'), ('start', numpy.int64), ('stop', numpy.int64),
    ('indices', h5py.special_dtype(ref=h5py.Reference)), ('available', numpy.bool_), ('comment', 'a1')])
split[0]['split'] = b'train'; split[0]['source'] = b'features'; split[0]['start'] = 0; split[0]['stop'] = shape[0]
split[0]['indices'] = h5py.Reference(); split[0]['available'] = True; split[0]['comment'] = b'.'
f.attrs['split'] = split
f.close()
`

// TestDataFileBombsRefused: a 6 KB HDF5 file declaring (1e9, 4) uint8
// loaded in memory died with "fatal error: out of memory"; (1e12, 784)
// gave "internal error … makeslice"; (3, 2^62+1, 4) was accepted. A
// gzipped idx file declaring more data than it can inflate to was read
// until memory ran out. Each is now an error naming the file, before
// anything is allocated.
func TestDataFileBombsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		t.Skipf("%s with h5py is needed: %v", py, err)
	}
	for _, c := range []struct {
		shape []string
		want  string
	}{
		{[]string{"1000000000", "4"}, "the file stores 0 bytes of it"},
		{[]string{"1000000000000", "784"}, "the file stores 0 bytes of it"},
		{[]string{"3", "4611686018427387905", "4"}, "whose size overflows"},
	} {
		h5 := filepath.Join(t.TempDir(), "bomb.hdf5")
		if out, err := exec.Command(py, append([]string{"-c", pyEmptyH5, h5}, c.shape...)...).CombinedOutput(); err != nil {
			t.Fatalf("h5py: %v\n%s", err, out)
		}
		for _, inMemory := range []string{"True", "False"} {
			t.Run(strings.Join(c.shape, "x")+"-"+inMemory, func(t *testing.T) {
				src := fmt.Sprintf("load(\"fuel.datasets\", \"H5PYDataset\")\nd = H5PYDataset(%q, which_sets = (\"train\",), load_in_memory = %s)\nprint(d.get_data(None, [0, 1])[0].shape)\n", h5, inMemory)
				runScriptExpectError(t, src, "2:", c.want, h5)
			})
		}
	}
	t.Run("idx-gzip", func(t *testing.T) {
		// The header declares 2^28 float64 (2 GiB); the gzip stream of a
		// few KiB cannot inflate to that.
		dir := t.TempDir()
		var buf bytes.Buffer
		gz := gzipBytes(append([]byte{0, 0, 0x0e, 1, 0x10, 0, 0, 0}, make([]byte, 4<<20)...))
		buf.Write(gz)
		for _, name := range []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
			if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, _, stderr := runBinary(t, "", "fuel", "convert", "mnist", "-d", dir, "-o", t.TempDir())
		noGoTrace(t, stderr)
		if code == 0 || !strings.Contains(stderr, "more than a gzip file of") || !strings.Contains(stderr, "train-images-idx3-ubyte.gz") {
			t.Errorf("status %d, stderr:\n%s", code, stderr)
		}
		if strings.Contains(stderr, "ReadIDXFile") {
			t.Errorf("the error names a Go function:\n%s", stderr)
		}
	})
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}
