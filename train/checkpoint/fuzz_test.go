package checkpoint

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/mainloop"
)

// goodCheckpoint is an encoded checkpoint of every part: two scripts,
// parameters and algorithm state of several dtypes, a mid-epoch
// position with generators, an extension's state and a log with rows of
// numbers, arrays and lists.
func goodCheckpoint(t testing.TB) []byte {
	t.Helper()
	log := mainloop.NewTrainingLog()
	log.Status.IterationsDone = 3
	log.Status.EpochStarted = true
	log.Status.TrainingStarted = true
	log.CurrentRow()["cost"] = float32(0.25)
	log.CurrentRow()["vec"] = nd.FromSlice([]int64{1, -2, 3})
	log.CurrentRow()["saved_to"] = []any{"a.tar", nil}
	rng := numpyrand.New(7)
	rng.StandardNormal()
	st := rng.State()
	c := &Checkpoint{
		Run: RunConfig{Overrides: map[string]string{"lr": "0.5"}, FloatX: "float32", DefaultSeed: 1,
			Scripts: []ScriptFile{{Path: "/x/exp.star", Source: []byte("print(1)\n")}, {Path: "/x/lib.star", Source: []byte("a = 1\n")}}},
		Parameters:     []Named{{"|mlp|W", nd.FromSlice([]float32{1, 2, 3, 4}, 2, 2)}, {"|mlp|b", nd.FromSlice([]float64{0.5}, 1)}},
		AlgorithmState: []Named{{"W_velocity", nd.FromSlice([]float32{0, 1, 0, 1}, 2, 2)}, {"t", nd.Scalar(nd.Int64, 3)}},
		Iteration: IterationState{Callback: "after_batch",
			EpochIterator: &fuel.IteratorState{Requests: &fuel.RequestPosition{}, RNG: &st},
			StreamRNGs:    []RNGState{{"ShuffledScheme", st}},
			Extensions:    []ExtensionData{{Index: 1, Name: "TrainingDataMonitoring", Arrays: [][]Value{{EncodeValue(nd.FromSlice([]float32{2}, 1))}}}}},
		Log: EncodeLog(log),
	}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkDecoded is what Decode must satisfy on any input: an error and no
// checkpoint, or a whole checkpoint that encodes and decodes again.
func checkDecoded(t *testing.T, c *Checkpoint, err error) {
	t.Helper()
	if err != nil {
		if c != nil {
			t.Fatalf("Decode returned a checkpoint with the error %v", err)
		}
		return
	}
	again, err := c.Encode()
	if err != nil {
		t.Fatalf("a decoded checkpoint does not encode: %v", err)
	}
	if _, err := Decode(again); err != nil {
		t.Fatalf("a decoded checkpoint, encoded again, does not decode: %v", err)
	}
}

// FuzzDecode feeds mutated checkpoint files to Decode: it must return
// an error (wrapping ErrCorrupt), never panic, never a partial
// checkpoint.
func FuzzDecode(f *testing.F) {
	good := goodCheckpoint(f)
	if _, err := Decode(good); err != nil {
		f.Fatalf("the seed checkpoint does not decode: %v", err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		checkDecoded(t, c, err)
	})
}

// reseal replaces member k (counting from the manifest, 0) of a
// checkpoint file by content and rewrites the manifest and its checksum
// to match, so that the fuzzer's bytes reach the member parsers past the
// checksums.
func reseal(t *testing.T, good []byte, k int, content []byte) []byte {
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
	var man Manifest
	if err := json.Unmarshal(datas[0], &man); err != nil {
		t.Fatal(err)
	}
	body := len(names) - 2
	k = 1 + k%body
	datas[k] = content
	sum := sha256.Sum256(content)
	man.Members[k-1].Size = int64(len(content))
	man.Members[k-1].SHA256 = hex.EncodeToString(sum[:])
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

// FuzzDecodeMember puts the fuzzer's bytes in one member of a valid
// checkpoint (the config, the parameters' or the algorithm state's .npz,
// the iteration state, the log or a script) with matching checksums.
func FuzzDecodeMember(f *testing.F) {
	good := goodCheckpoint(f)
	tr := tar.NewReader(bytes.NewReader(good))
	k := -1
	for {
		_, err := tr.Next()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(tr)
		if k >= 0 {
			f.Add(uint8(k), b)
		}
		k++
	}
	f.Fuzz(func(t *testing.T, k uint8, content []byte) {
		c, err := Decode(reseal(t, good, int(k), content))
		checkDecoded(t, c, err)
	})
}

// FuzzDecodeNPZ feeds mutated .npz archives (and bare .npy arrays) to
// the readers: errors, never a panic, and arrays whose data matches
// their shape.
func FuzzDecodeNPZ(f *testing.F) {
	for _, arrays := range [][]Named{
		{{"W", nd.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)}, {"b", nd.FromSlice([]float64{-1}, 1)}},
		{{"i", nd.FromSlice([]int64{1, -2}, 2)}, {"s", nd.Scalar(nd.Int32, 7)}, {"u", nd.FromSlice([]uint8{1, 2}, 1, 2)}},
		{{"e", nd.New(nd.Float32, 0, 4)}},
	} {
		b, err := EncodeNPZ(arrays)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"))
	f.Add(npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -1), }", make([]byte, 16)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		arrays, err := DecodeNPZ(data)
		if err == nil {
			for _, a := range arrays {
				if n, ok := nd.ProdChecked(a.Array.Shape); !ok || n != a.Array.Size() || lenData(a.Array) != n {
					t.Fatalf("array %s of shape %v holds %d elements", a.Name, a.Array.Shape, lenData(a.Array))
				}
			}
		}
		if a, err := npy.Decode(data); err == nil {
			if n, ok := nd.ProdChecked(a.Shape); !ok || lenData(a) != n {
				t.Fatalf(".npy array of shape %v holds %d elements", a.Shape, lenData(a))
			}
		}
	})
}

func lenData(a *nd.Array) int {
	switch d := a.Data.(type) {
	case []float32:
		return len(d)
	case []float64:
		return len(d)
	case []int64:
		return len(d)
	case []int32:
		return len(d)
	case []int16:
		return len(d)
	case []uint16:
		return len(d)
	case []uint8:
		return len(d)
	case []bool:
		return len(d)
	}
	return -1
}

// npyFile is an .npy file (format 1.0) with the given header dictionary.
func npyFile(header string, data ...byte) []byte {
	h := []byte(header + "\n")
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), data...)
}
