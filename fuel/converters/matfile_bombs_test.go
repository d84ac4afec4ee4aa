package converters

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// compressedDoubleStoredAsUint8 is a MAT-file of one compressed variable
// x of class double, dims (1, n), stored as n uint8 zeros: a few KB on
// disk, n bytes inflated, 8n bytes once decoded as float64.
func compressedDoubleStoredAsUint8(n int) []byte {
	le := binary.LittleEndian
	elem := func(typ uint32, data []byte) []byte {
		b := le.AppendUint32(le.AppendUint32(nil, typ), uint32(len(data)))
		b = append(b, data...)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
		return b
	}
	head := make([]byte, 128)
	copy(head, "MATLAB 5.0 MAT-file")
	le.PutUint16(head[124:], 0x0100)
	copy(head[126:], "IM")
	flags := le.AppendUint32(le.AppendUint32(nil, 6), 0) // mxDOUBLE_CLASS
	dims := le.AppendUint32(le.AppendUint32(nil, 1), uint32(n))
	pre := append(append(elem(miUINT32, flags), elem(miINT32, dims)...), elem(miINT8, []byte("x"))...)
	// The data element's tag, then n zero bytes (n is a multiple of 8).
	body := append(pre, le.AppendUint32(le.AppendUint32(nil, miUINT8), uint32(n))...)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(le.AppendUint32(le.AppendUint32(nil, miMATRIX), uint32(len(body)+n)))
	zw.Write(body)
	zeros := make([]byte, 1<<16)
	for left := n; left > 0; left -= len(zeros) {
		zw.Write(zeros[:min(left, len(zeros))])
	}
	zw.Close()
	out := append(head, le.AppendUint32(le.AppendUint32(nil, miCOMPRESSED), uint32(z.Len()))...)
	return append(out, z.Bytes()...)
}

// TestMatBombsRefused (issue 32, item 5): a 131 KB compressed MAT
// variable expanded to 1.37 GB as float64, and a 976-byte meta.mat with
// num_children = 2**28 asked for 8.2 GB (54 s) and the value was wrapped
// into Fuel's int16 column. Sizes are now checked against what will be
// allocated after the expansion, before allocating.
func TestMatBombsRefused(t *testing.T) {
	defer nd.SetMemoryBudget(64<<20, "the test's budget")()
	b := compressedDoubleStoredAsUint8(16 << 20) // 16 MiB inflated, 128 MiB as float64
	if len(b) > 64<<10 {
		t.Fatalf("the bomb is %d bytes", len(b))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bomb.mat")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseMat(b); err == nil || !strings.Contains(err.Error(), "128.0 MiB, more than the test's budget") {
		t.Errorf("ParseMat: %v", err)
	}
	if _, err := loadMat(path); err == nil || !strings.Contains(err.Error(), "128.0 MiB, more than the test's budget") {
		t.Errorf("loadMat: %v", err)
	}
	// Inflated beyond the budget: refused before the buffer is made.
	if _, err := ParseMat(compressedDoubleStoredAsUint8(80 << 20)); err == nil || !strings.Contains(err.Error(), "exceeds the test's budget") {
		t.Errorf("ParseMat of 80 MiB inflated: %v", err)
	}
	// What fits still reads.
	if vars, err := ParseMat(compressedDoubleStoredAsUint8(1 << 20)); err != nil || len(vars["x"].Numbers) != 1<<20 {
		t.Errorf("ParseMat of 1 MiB: %v", err)
	}

	if exec.Command("/usr/bin/python3", "-c", "import scipy.io").Run() != nil {
		t.Skip("Debian's python3-scipy writes the meta.mat")
	}
	meta := filepath.Join(dir, "meta.mat")
	py := `import sys, numpy, scipy.io
fields = ["ILSVRC2012_ID", "WNID", "words", "gloss", "num_children", "children", "wordnet_height", "num_train_images"]
s = numpy.empty((3, 1), dtype=[(f, object) for f in fields])
for i in range(3):
    s[i, 0] = (float(i + 1), "n%08d" % i, "w", "g", float(2 ** 28 if i == 2 else 0), numpy.zeros((0, 0)), 0.0, 10.0)
scipy.io.savemat(sys.argv[1], {"synsets": s})
`
	if out, err := exec.Command("/usr/bin/python3", "-c", py, meta).CombinedOutput(); err != nil {
		t.Fatalf("scipy: %v\n%s", err, out)
	}
	mb, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadILSVRCMetadataMat(mb, 2012); err == nil || !strings.Contains(err.Error(), "synsets(3).num_children: 268435456 does not fit") {
		t.Errorf("num_children = 2**28: %v", err)
	}
}
