package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/train/algorithms"
	"github.com/blocks-go/blocks/train/extensions"
	"github.com/blocks-go/blocks/train/mainloop"
)

// noiseOp adds N(0, 1) noise drawn from its own generator: a RandomOp.
// onRun, when set, runs first (in the step's forward pass).
type noiseOp struct {
	rng   *numpyrand.RandomState
	onRun func()
}

func (o *noiseOp) String() string                  { return "noise" }
func (o *noiseOp) RNG() *numpyrand.RandomState     { return o.rng }
func (o *noiseOp) Shape(in [][]int) ([]int, error) { return in[0], nil }
func (o *noiseOp) Grad(in []*core.Variable, out, gz *core.Variable) []*core.Variable {
	return []*core.Variable{gz}
}
func (o *noiseOp) Type(in []*core.Variable) (nd.DType, int, error) {
	return in[0].DType(), in[0].NDim(), nil
}
func (o *noiseOp) Run(out *nd.Array, in []*nd.Array) {
	if o.onRun != nil {
		o.onRun()
	}
	for i := 0; i < in[0].Size(); i++ {
		out.SetFlat(i, in[0].Flat(i)+0.1*o.rng.StandardNormal())
	}
}

var _ core.RandomOp = (*noiseOp)(nil)

// newLoop builds a small model trained by Adam on a shuffled stream, with
// a noise op in the graph, and a main loop over it.
func newLoop(t *testing.T, exts ...mainloop.Extension) (*mainloop.MainLoop, Bindings) {
	t.Helper()
	return newLoopForward(t, nil, exts...)
}

// newLoopForward is newLoop with forward run in every step's forward
// pass (by the noise op).
func newLoopForward(t *testing.T, forward func(), exts ...mainloop.Extension) (*mainloop.MainLoop, Bindings) {
	t.Helper()
	r := numpyrand.New(3)
	xs := make([]float32, 40*3)
	ys := make([]float32, 40)
	for i := range xs {
		xs[i] = float32(r.StandardNormal())
	}
	for i := range ys {
		ys[i] = xs[3*i] - 2*xs[3*i+1]
	}
	ds, err := datasets.NewIndexableDataset([]datasets.Source{
		{Name: "x", Data: nd.FromSlice(xs, 40, 3)}, {Name: "y", Data: nd.FromSlice(ys, 40, 1)}}, datasets.IndexableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sch, err := schemes.ShuffledScheme(schemes.Range(40), 7, numpyrand.New(1), false)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := streams.DataStream(ds, sch)
	if err != nil {
		t.Fatal(err)
	}
	x := core.NewInput("x", nd.Float32, 2)
	y := core.NewInput("y", nd.Float32, 2)
	w := core.NewShared(nd.FromSlice([]float32{0.1, -0.2, 0.3}, 3, 1), "W")
	w.Tag.Name = "W"
	h, err := core.Dot(x, w)
	if err != nil {
		t.Fatal(err)
	}
	noisy, err := core.ApplyRandomOp(&noiseOp{rng: numpyrand.New(9), onRun: forward}, h)
	if err != nil {
		t.Fatal(err)
	}
	cost := core.MeanAll(core.Sqr(core.Sub(noisy, y)))
	gd, err := algorithms.NewGradientDescent(algorithms.GradientDescentConfig{Cost: cost, Parameters: []*core.Variable{w},
		StepRule: algorithms.NewAdam(nd.Float32, 0.05, 0.9, 0.999, 1e-8, 1-1e-8)})
	if err != nil {
		t.Fatal(err)
	}
	loop := mainloop.New(gd, stream, nil, nil, exts)
	loop.Signals = make(chan os.Signal)
	return loop, Bindings{Loop: loop, Namer: func(p *core.Variable) string { return "/model." + p.Name }}
}

func finishAfter(t *testing.T, batches int) mainloop.Extension {
	f, err := extensions.NewFinishAfter(extensions.Triggers{"after_n_batches": batches})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Interrupting after k batches (mid-epoch), saving, and resuming in a
// fresh loop gives the state of an uninterrupted run, bit for bit,
// including the generators of the scheme and of the random op.
func TestCaptureRestoreMidEpoch(t *testing.T) {
	ref, refB := newLoop(t, finishAfter(t, 15))
	if err := ref.Run(); err != nil {
		t.Fatal(err)
	}
	first, firstB := newLoop(t, finishAfter(t, 9)) // 6 batches an epoch: mid-epoch 2
	if err := first.Run(); err != nil {
		t.Fatal(err)
	}
	c, err := Capture(firstB, "after_batch")
	if err != nil {
		t.Fatal(err)
	}
	if c.Iteration.EpochIterator == nil || len(c.Iteration.RandomOps) != 1 || len(c.Iteration.StreamRNGs) != 1 {
		t.Fatalf("captured %+v", c.Iteration)
	}
	c.Run.Scripts = []ScriptFile{{Path: "<go>", Source: []byte{}}}
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	second, secondB := newLoop(t, finishAfter(t, 15))
	if err := Restore(secondB, c2, Everything); err != nil {
		t.Fatal(err)
	}
	second.Log.Status.TrainingStarted = false
	if err := second.Run(); err != nil {
		t.Fatal(err)
	}
	diffs, err := Diff(secondB, mustCapture(t, refB))
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Errorf("resumed run differs from the uninterrupted one: %v", diffs)
	}
}

func mustCapture(t *testing.T, b Bindings) *Checkpoint {
	t.Helper()
	c, err := Capture(b, "after_batch")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sample is a checkpoint of a few batches of training, with scripts.
func sample(t *testing.T) *Checkpoint {
	t.Helper()
	loop, b := newLoop(t, finishAfter(t, 3))
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	loop.Log.CurrentRow()["some_float"] = 0.1
	loop.Log.CurrentRow()["some_f32"] = float32(math.Pi)
	loop.Log.CurrentRow()["vec"] = nd.FromSlice([]int64{1, -2, 3})
	loop.Log.CurrentRow()["saved_to"] = []any{"a.tar", nil}
	c := mustCapture(t, b)
	c.Run = RunConfig{Overrides: map[string]string{"lr": "0.5"}, FloatX: "float32", DefaultSeed: 1,
		Scripts: []ScriptFile{{Path: "/x/exp.star", Source: []byte("print(1)\n")}, {Path: "/x/lib.star", Source: []byte("a = 1\n")}}}
	return c
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	c := sample(t)
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Parameters, d.Parameters) || !reflect.DeepEqual(c.AlgorithmState, d.AlgorithmState) ||
		!reflect.DeepEqual(c.Iteration, d.Iteration) || !reflect.DeepEqual(c.Files(), d.Files()) {
		t.Error("round trip changed the checkpoint")
	}
	l1, _ := c.Log.Decode()
	l2, _ := d.Log.Decode()
	if !reflect.DeepEqual(l1, l2) {
		t.Errorf("log round trip: %+v != %+v", l2, l1)
	}
	if r, _ := l2.Row(3); r["some_f32"] != float32(math.Pi) || r["some_float"] != 0.1 {
		t.Errorf("log values changed type or bits: %#v", r)
	}
}

// The _parameters member is an .npz that Debian's numpy reads with
// Blocks' keys and the same values.
func TestParametersLoadInNumpy(t *testing.T) {
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is needed (apt-get install python3-numpy): %v", py, err)
	}
	c := sample(t)
	c.Parameters = append(c.Parameters,
		Named{"|mlp|linear_0.W", nd.FromSlice([]float32{1.5, -2, float32(math.Inf(1)), 3e-39}, 2, 2)},
		Named{"|mlp|linear_0.b", nd.FromSlice([]float64{math.Pi})},
		Named{"|scalar", nd.Scalar(nd.Float32, 0.25)},
		Named{"|ints", nd.FromSlice([]int64{-1, 1 << 40}, 1, 2)})
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "c.tar")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, tarfile, io, json, numpy
t = tarfile.open(sys.argv[1])
z = numpy.load(io.BytesIO(t.extractfile("_parameters").read()))
out = {}
for k in z.files:
    a = z[k]
    out[k] = [str(a.dtype), list(a.shape), a.ravel().view(numpy.uint8).tobytes().hex()]
print(json.dumps(out))
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	var got map[string][3]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got) != len(c.Parameters) {
		t.Errorf("numpy sees %d arrays, want %d", len(got), len(c.Parameters))
	}
	for _, p := range c.Parameters {
		g, ok := got[p.Name]
		if !ok {
			t.Errorf("numpy has no key %q (keys %v)", p.Name, got)
			continue
		}
		shape := fmt.Sprint(g[1])
		if g[0] != p.Array.DType().String() || shape != fmt.Sprint(intsAsFloats(p.Array.Shape)) ||
			g[2] != fmt.Sprintf("%x", arrayBytes(p.Array)) {
			t.Errorf("%s: numpy reads %v, want %s %v %x", p.Name, g, p.Array.DType(), p.Array.Shape, arrayBytes(p.Array))
		}
	}
}

func intsAsFloats(s []int) []any {
	out := make([]any, len(s))
	for i, d := range s {
		out[i] = float64(d)
	}
	return out
}

// Truncated, tampered and wrong-version files each give a clear error
// wrapping ErrCorrupt, never a partial checkpoint.
func TestCorruptCheckpoints(t *testing.T) {
	good, err := sample(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x01
		return b
	}
	member := func(name string) int { // offset of a member's data
		i := bytes.Index(good, []byte(name))
		if i < 0 {
			t.Fatalf("no %s", name)
		}
		return i
	}
	paramAt := bytes.Index(good, []byte("\x93NUMPY"))
	c := sample(t)
	c.Manifest.ProjectVersion = "9.9"
	wrongVersion := func() []byte {
		// Re-encode with a future version number and a matching checksum.
		d, _ := c.Encode()
		s := strings.Replace(string(d), `"format_version": 1`, `"format_version": 2`, 1)
		return []byte(s)
	}()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no tar members"},
		{"truncated in the middle", good[:len(good)/2], "truncated"},
		{"truncated before the checksum", good[:member(MemberChecksum)-1], "truncated"},
		{"a parameter byte flipped", flip(paramAt + 200), "_parameters does not match its SHA-256"},
		{"the script edited", flip(member("print(1)")), "does not match its SHA-256"},
		{"the manifest edited", flip(member(`"iterations_done"`) + 2), "the manifest does not match its checksum"},
		{"a future format version", wrongVersion, "format version 2"},
		{"not a checkpoint", []byte(strings.Repeat("hello", 200)), "not a valid checkpoint"},
	}
	for _, tc := range cases {
		got, err := Decode(tc.data)
		if err == nil || got != nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A model that does not fit the checkpoint is refused before anything
// changes.
func TestRestoreRefusesOtherModel(t *testing.T) {
	c := sample(t)
	c.Parameters[0].Array = nd.New(nd.Float32, 4, 1)
	loop, b := newLoop(t)
	before := loop.Algorithm.(*algorithms.GradientDescent).Parameters[0].Value().Copy()
	err := Restore(b, c, Everything)
	if err == nil || !strings.Contains(err.Error(), "different model") {
		t.Fatalf("error %v", err)
	}
	if !reflect.DeepEqual(before, loop.Algorithm.(*algorithms.GradientDescent).Parameters[0].Value()) {
		t.Error("a refused restore changed the parameters")
	}
}

// A checkpoint whose algorithm state lists the same names in another
// order (written when the graph ordered the parameters otherwise: before
// ComputationGraph followed Blocks' order) restores each entry by its
// name; a name it lacks is still refused.
func TestRestoreAlgorithmStateByName(t *testing.T) {
	c := sample(t)
	n := len(c.AlgorithmState)
	if n < 3 {
		t.Fatalf("want several algorithm state entries, got %d", n)
	}
	want := map[string]*nd.Array{}
	for _, s := range c.AlgorithmState {
		want[stateName(s.Name)] = s.Array
	}
	slices.Reverse(c.AlgorithmState)
	for i := range c.AlgorithmState {
		c.AlgorithmState[i].Name = fmt.Sprintf("%03d:%s", i, stateName(c.AlgorithmState[i].Name))
	}
	_, b := newLoop(t)
	if err := Restore(b, c, Everything); err != nil {
		t.Fatal(err)
	}
	keys, vars := b.algorithmState()
	for i, v := range vars {
		if !reflect.DeepEqual(v.Value(), want[stateName(keys[i])]) {
			t.Errorf("%s restored as %v, want %v", keys[i], v.Value(), want[stateName(keys[i])])
		}
	}
	c.AlgorithmState[0].Name = "000:other"
	if err := Restore(b, c, Everything); err == nil || !strings.Contains(err.Error(), "different step rule") {
		t.Errorf("a missing name: error %v", err)
	}
}

// path holds the newest checkpoint; keep_last keeps older ones named
// with their iteration; no temporary file stays.
func TestWriteKeepLast(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.tar")
	for it := 1; it <= 5; it++ {
		if err := Write(path, []byte(fmt.Sprint(it)), WriteOptions{KeepLast: 3, PrevIteration: it - 1}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(path)
	if string(b) != "5" {
		t.Errorf("path holds %q, want the newest", b)
	}
	kept := Kept(path)
	want := []string{filepath.Join(dir, "run_iter3.tar"), filepath.Join(dir, "run_iter4.tar")}
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if b, _ := os.ReadFile(want[0]); string(b) != "3" {
		t.Errorf("%s holds %q", want[0], b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("directory holds %d files, want 3", len(entries))
	}
}

// The Checkpoint extension writes saved_to, and Load restores what it
// saved and records loaded_from.
func TestCheckpointAndLoadExtensions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.tar")
	ck, err := NewCheckpointExtension(path, 1, []string{"log"}, Bindings{}, extensions.Triggers{"every_n_batches": 2})
	if err != nil {
		t.Fatal(err)
	}
	loop, _ := newLoop(t, finishAfter(t, 4), ck)
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	if r, _ := loop.Log.Row(4); !reflect.DeepEqual(r[RecordSavedTo], []any{path, path}) {
		t.Errorf("saved_to at 4: %v", r[RecordSavedTo])
	}
	c, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Manifest.IterationsDone != 4 || c.Iteration.Callback != "after_training" {
		t.Errorf("manifest %+v, callback %s", c.Manifest, c.Iteration.Callback)
	}
	ld, err := NewLoadExtension(path, true, true, Bindings{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	loop2, _ := newLoop(t, ld, finishAfter(t, 6))
	if err := loop2.Run(); err != nil {
		t.Fatal(err)
	}
	if loop2.Log.Status.IterationsDone != 6 || loop2.Log.Status.ResumedFrom == "" {
		t.Errorf("after Load: %d iterations, resumed from %q; want 6 (4 loaded)", loop2.Log.Status.IterationsDone, loop2.Log.Status.ResumedFrom)
	}
	if r, _ := loop2.Log.Row(4); r[RecordLoadedFrom] != path {
		t.Errorf("loaded_from: %v", r[RecordLoadedFrom])
	}
	if _, err := NewCheckpointExtension(path, 1, []string{"pickle"}, Bindings{}, nil); err == nil {
		t.Error("save_separately accepted an unknown member")
	}
}
