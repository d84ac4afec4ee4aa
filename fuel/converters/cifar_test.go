package converters

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// pyCIFAR writes small cifar-10-python.tar.gz and cifar-100-python.tar.gz
// archives laid out as the real ones (pickled dicts with a uint8 'data'
// array (N, 3072) and label lists), pickled with several protocols, and
// prints what Fuel's convert_cifar10/100 would store: the sha256 of each
// split's sources after its concatenations and reshapes.
const pyCIFAR = `
import hashlib, io, json, pickle, sys, tarfile
import numpy
out = sys.argv[1]
rng = numpy.random.RandomState(5)
def add(tar, name, obj, protocol):
    b = pickle.dumps(obj, protocol=protocol)
    info = tarfile.TarInfo(name); info.size = len(b)
    tar.addfile(info, io.BytesIO(b))
def h(a):
    return hashlib.sha256(numpy.ascontiguousarray(a).tobytes()).hexdigest()
res = {}
with tarfile.open(out + '/cifar-10-python.tar.gz', 'w:gz') as tar:
    batches = []
    for i, n in enumerate([3, 2, 4, 1, 2, 3]):
        d = {'batch_label': 'batch %d' % i, 'data': rng.randint(0, 256, size=(n, 3072)).astype('uint8'),
             'labels': [int(x) for x in rng.randint(0, 10, size=n)], 'filenames': ['f%d' % k for k in range(n)]}
        batches.append(d)
        name = 'cifar-10-batches-py/' + ('data_batch_%d' % (i + 1) if i < 5 else 'test_batch')
        add(tar, name, d, [2, 3, 4, 2, 4, 2][i])
    tf = numpy.concatenate([b['data'].reshape(b['data'].shape[0], 3, 32, 32) for b in batches[:5]])
    tl = numpy.expand_dims(numpy.concatenate([numpy.array(b['labels'], dtype=numpy.uint8) for b in batches[:5]]), 1)
    res['cifar10'] = {'train': {'features': [list(tf.shape), h(tf)], 'targets': [list(tl.shape), h(tl)]},
                      'test': {'features': [[3, 3, 32, 32], h(batches[5]['data'].reshape(3, 3, 32, 32))],
                               'targets': [[3, 1], h(numpy.expand_dims(numpy.array(batches[5]['labels'], dtype=numpy.uint8), 1))]}}
with tarfile.open(out + '/cifar-100-python.tar.gz', 'w:gz') as tar:
    res['cifar100'] = {}
    for split, n, proto in (('train', 4, 2), ('test', 2, 4)):
        d = {'data': rng.randint(0, 256, size=(n, 3072)).astype('uint8'),
             'coarse_labels': [int(x) for x in rng.randint(0, 20, size=n)], 'fine_labels': [int(x) for x in rng.randint(0, 100, size=n)]}
        add(tar, 'cifar-100-python/' + split, d, proto)
        res['cifar100'][split] = {'features': [[n, 3, 32, 32], h(d['data'].reshape(n, 3, 32, 32))]}
        for k in ('coarse_labels', 'fine_labels'):
            res['cifar100'][split][k] = [[n, 1], h(numpy.array(d[k], dtype=numpy.uint8).reshape(-1, 1))]
json.dump(res, sys.stdout)
`

func TestConvertCIFAR(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is needed: %v", py, err)
	}
	dir := t.TempDir()
	b, err := exec.Command(py, "-c", pyCIFAR, dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]map[string][2]json.RawMessage
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, ds := range []string{"cifar10", "cifar100"} {
		path, err := Convert(ds, Options{Directory: dir, OutputDirectory: dir})
		if err != nil {
			t.Fatal(err)
		}
		for split, sources := range want[ds] {
			d, out := readAll(t, path, split)
			for i, src := range d.Sources() {
				w, ok := sources[src]
				if !ok {
					t.Errorf("%s: unexpected source %s", ds, src)
					continue
				}
				var shape []int
				var hash string
				json.Unmarshal(w[0], &shape)
				json.Unmarshal(w[1], &hash)
				sum := sha256.Sum256(out[i].Data.([]uint8))
				if got := hex.EncodeToString(sum[:]); got != hash || !equalInts(out[i].Shape, shape) || out[i].DType() != nd.Uint8 {
					t.Errorf("%s %s/%s: %s%v %s, Fuel's converter %v %s", ds, split, src, out[i].DType(), out[i].Shape, got[:8], shape, hash[:8])
				}
			}
			d.Close()
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUnpicklePython2 reads the opcodes Python 2's cPickle writes for a
// CIFAR batch (SHORT_BINSTRING keys, BINSTRING array data), assembled by
// hand, and refuses a pickle that calls anything else.
func TestUnpicklePython2(t *testing.T) {
	var p bytes.Buffer
	s := func(x string) { p.WriteByte('U'); p.WriteByte(byte(len(x))); p.WriteString(x) }
	p.Write([]byte{0x80, 2, '}', '('})
	s("labels")
	p.Write([]byte{']', '(', 'K', 3, 'K', 4, 'e'})
	s("data")
	p.WriteString("cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85")
	s("b")
	p.Write([]byte{0x87, 'R', '(', 'K', 1, 'K', 2, 'K', 3, 0x86})
	p.WriteString("cnumpy\ndtype\n")
	s("u1")
	p.Write([]byte{'K', 0, 'K', 1, 0x87, 'R', '(', 'K', 3})
	s("|")
	p.Write([]byte{'N', 'N', 'N', 'J', 0xff, 0xff, 0xff, 0xff, 'J', 0xff, 0xff, 0xff, 0xff, 'K', 0, 't', 'b', 0x89, 'T'})
	binary.Write(&p, binary.LittleEndian, uint32(6))
	p.Write([]byte{1, 2, 3, 4, 5, 255})
	p.Write([]byte{'t', 'b', 'u', '.'})
	v, err := unpickle(&p)
	if err != nil {
		t.Fatal(err)
	}
	d := v.(map[string]any)
	a, err := d["data"].(*pyArray).toND()
	if err != nil {
		t.Fatal(err)
	}
	if !equalInts(a.Shape, []int{2, 3}) || a.Data.([]uint8)[5] != 255 || len(*d["labels"].(*[]any)) != 2 {
		t.Errorf("unpickled %v %v", a, d["labels"])
	}
	_, err = unpickle(strings.NewReader("\x80\x02cos\nsystem\nU\x02lsR."))
	if err == nil || !strings.Contains(err.Error(), "refusing the global os.system") {
		t.Errorf("os.system: %v", err)
	}
	if _, err := unpickle(strings.NewReader("\x80\x02}")); err == nil {
		t.Error("a truncated pickle read")
	}
}
