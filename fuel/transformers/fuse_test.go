package transformers_test

import (
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	. "github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
)

// Cast over ScaleAndShift runs fused (one vectorized pass for uint8 sources);
// the batches are bit-identical to the two steps run apart (a Mapping in
// between prevents the fusion), for every mix of selected sources and
// dtypes, and the fused pipeline resumes.
func TestFusedScaleShiftCast(t *testing.T) {
	noConfig(t)
	identity := func(d []*nd.Array) ([]*nd.Array, error) { return d, nil }
	for _, c := range []struct {
		scale, shift float64
		ss, cast     []string
		dtype        string
	}{
		{1 / 255.0, 0, nil, nil, "float32"},
		{0.1, -3.7, []string{"x"}, nil, "float32"},
		{2.5, 1, nil, []string{"x", "y"}, "float64"},
		{1e-3, 0.5, []string{"x", "z"}, []string{"x"}, "float32"},
	} {
		fused := must(Cast(must(ScaleAndShift(toyStream(t, 2), c.scale, c.shift, c.ss)), c.dtype, c.cast))
		apart := must(Cast(must(Mapping(must(ScaleAndShift(toyStream(t, 2), c.scale, c.shift, c.ss)), identity, nil)), c.dtype, c.cast))
		a, b := epoch(t, fused), epoch(t, apart)
		for k := range b {
			for i := range b[k] {
				if !nd.Equal(a[k][i], b[k][i]) {
					t.Errorf("%+v: batch %d source %d: fused %v, apart %v", c, k, i, a[k][i], b[k][i])
				}
			}
		}
		it := must(fused.GetEpochIterator())
		it.Next()
		st := must(it.(fuel.StatefulIterator).State())
		rest := must(must(Cast(must(ScaleAndShift(toyStream(t, 2), c.scale, c.shift, c.ss)), c.dtype, c.cast)).ResumeEpochIterator(st))
		d := must(rest.Next())
		for i := range d {
			if !nd.Equal(d[i], b[1][i]) {
				t.Errorf("%+v: resumed batch source %d differs", c, i)
			}
		}
	}
}

// Sourcewise transformers apply to each example of a ragged batch, fused
// or not, instead of failing on the object array.
func TestSourcewiseOnRaggedBatches(t *testing.T) {
	noConfig(t)
	mk := func() fuel.Stream {
		return must(Batch(iterStream(t, nil, "data", [][]int64{{1}, {2, 3}, {4, 5, 6}}), must(schemes.ConstantScheme(3, 0, 0)), 0))
	}
	for name, s := range map[string]fuel.Stream{
		"ScaleAndShift+Cast": must(Cast(must(ScaleAndShift(mk(), 2, 1, nil)), "float32", nil)),
		"Cast":               must(Cast(mk(), "float64", nil)),
		"Flatten":            must(Flatten(mk(), nil)),
		"ForceFloatX":        must(ForceFloatX(must(ScaleAndShift(mk(), 2, 1, nil)), nil)),
	} {
		d := epoch(t, s)[0][0]
		parts, err := d.Parts()
		if err != nil || d.DType() != nd.Object || len(parts) != 3 || parts[2].Shape[0] != 3 {
			t.Errorf("%s: %s%v %v", name, d.DType(), d.Shape, err)
			continue
		}
		if name == "ScaleAndShift+Cast" && (parts[1].DType() != nd.Float32 || parts[1].Flat(1) != 7) {
			t.Errorf("%s: example 1 = %v", name, parts[1])
		}
	}
}

// The fused pass lends its float32 batches only to a consumer that asks
// (fuel.Lend): a plain iteration gets batches of its own, which stay
// intact however long they are kept (even a stray Release leaves them
// alone); a consumer that asks and releases each batch when done (as the
// main loop does) gets the same few buffers back, the values still
// bit-identical to the unfused steps, the short final batch included; a
// batch kept before release (as a script's callback keeps it) is never
// reused.
func TestFusedCastLendsOnlyWhenAsked(t *testing.T) {
	noConfig(t)
	const n, width = 10, 37 // 4 batches of 4 rows, 148 bytes each, then 2
	raw := make([]uint8, n*width)
	for i := range raw {
		raw[i] = uint8(i*131 + i/7)
	}
	mk := func() fuel.Stream {
		ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: nd.FromSlice(raw, n, width)}}, datasets.IndexableOptions{}))
		s := must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), 4))))
		return must(Flatten(must(Cast(must(ScaleAndShift(s, 1/255.0, 0.25, nil)), "float32", nil)), nil))
	}
	identity := func(d []*nd.Array) ([]*nd.Array, error) { return d, nil }
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: nd.FromSlice(raw, n, width)}}, datasets.IndexableOptions{}))
	apart := epoch(t, must(Cast(must(Mapping(must(ScaleAndShift(must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), 4)))), 1/255.0, 0.25, nil)), identity, nil)), "float32", nil)))

	var kept [][]*nd.Array
	plain := must(mk().GetEpochIterator())
	for {
		d, err := plain.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, d)
		d[0].Release() // not lent: nothing happens
	}
	if len(kept) != len(apart) {
		t.Fatalf("%d batches, want %d", len(kept), len(apart))
	}
	for k := range apart {
		if !nd.Equal(kept[k][0], apart[k][0]) {
			t.Fatalf("kept batch %d: fused %v, apart %v", k, kept[k][0], apart[k][0])
		}
	}
	if &kept[0][0].Data.([]float32)[0] == &kept[1][0].Data.([]float32)[0] {
		t.Fatal("two batches of a plain iteration share a buffer")
	}

	it := must(mk().GetEpochIterator())
	if !fuel.Lend(it) {
		t.Fatal("Flatten over the fused Cast does not lend")
	}
	var first *float32
	var held *nd.Array
	for k := 0; ; k++ {
		d, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !nd.Equal(d[0], apart[k][0]) {
			t.Fatalf("released run, batch %d: fused %v, apart %v", k, d[0], apart[k][0])
		}
		buf := &d[0].Data.([]float32)[0]
		switch {
		case k == 0:
			first = buf
		case k == 1 && buf != first:
			t.Fatal("the released first batch's buffer was not reused")
		case k == 2:
			d[0].Keep()
			held = d[0]
		case k == 3 && buf == &held.Data.([]float32)[0]:
			t.Fatal("a kept batch's buffer was reused")
		}
		d[0].Release()
		if k != 2 && (d[0].Size() != 0 || d[0].NDim() != 1) {
			t.Fatalf("a released batch is %v, want empty", d[0].Shape)
		}
	}
	if !nd.Equal(held, apart[2][0]) {
		t.Fatalf("the kept batch changed: %v, want %v", held, apart[2][0])
	}
}

// The request to lend passes down through MultiProcessing and the
// transformers that never keep what they pass on, and stops at one that
// might (a Mapping's function may keep its input): there the fused Cast
// below gives batches of its own.
func TestLendPassesDownOnlyWhereSafe(t *testing.T) {
	noConfig(t)
	fused := func() fuel.Stream {
		return must(Cast(must(ScaleAndShift(toyStream(t, 2), 0.5, 0, nil)), "float32", nil))
	}
	identity := func(d []*nd.Array) ([]*nd.Array, error) { return d, nil }
	for name, c := range map[string]struct {
		s    fuel.Stream
		lend bool
	}{
		"fused Cast":                  {fused(), true},
		"Flatten, Rename":             {must(Rename(must(Flatten(fused(), nil)), map[string]string{"x": "u"}, "")), true},
		"FilterSources":               {must(FilterSources(fused(), []string{"x"})), true},
		"MultiProcessing":             {must(MultiProcessing(fused(), 2)), true},
		"Mapping":                     {must(Mapping(fused(), identity, nil)), false},
		"Cast over a Mapping":         {must(Cast(must(Mapping(must(ScaleAndShift(toyStream(t, 2), 0.5, 0, nil)), identity, nil)), "float32", nil)), false},
		"Batch over Unpack (example)": {must(Batch(must(Unpack(fused())), must(schemes.ConstantScheme(2, 0, 0)), 0)), false},
	} {
		it := must(c.s.GetEpochIterator())
		if got := fuel.Lend(it); got != c.lend {
			t.Errorf("%s: Lend() = %v, want %v", name, got, c.lend)
		}
		if cl, ok := it.(interface{ Close() }); ok {
			cl.Close()
		}
	}
}

// The fusion is the package's own affair: the saved iterator state of
// Cast over ScaleAndShift has both transformers' levels, as the user built
// the pipeline (and as the same steps kept apart save it), and a state
// without the ScaleAndShift level is refused with a clear error.
func TestFusedStateHasBothLevels(t *testing.T) {
	noConfig(t)
	identity := func(d []*nd.Array) ([]*nd.Array, error) { return d, nil }
	fused := must(Cast(must(ScaleAndShift(toyStream(t, 2), 0.5, 0, nil)), "float32", nil))
	apart := must(Cast(must(Mapping(toyStream(t, 2), identity, nil)), "float32", nil))
	state := func(s fuel.Stream) fuel.IteratorState {
		it := must(s.GetEpochIterator())
		must(it.Next())
		return must(it.(fuel.StatefulIterator).State())
	}
	got, want := state(fused), state(apart)
	if got.Child == nil || got.Child.Child == nil || got.Child.Child.Requests == nil || got.Child.Requests != nil {
		t.Fatalf("the fused pipeline's state is %s, want Cast's level over ScaleAndShift's over the DataStream's", must(json.Marshal(got)))
	}
	if g, w := must(json.Marshal(got)), must(json.Marshal(want)); string(g) != string(w) {
		t.Fatalf("fused state %s, the same levels kept apart %s", g, w)
	}
	short := fuel.IteratorState{Child: got.Child.Child}
	_, err := fused.ResumeEpochIterator(short)
	if err == nil || !strings.Contains(err.Error(), "no state for the stream under its ScaleAndShift") {
		t.Fatalf("a state without the ScaleAndShift level: %v", err)
	}
}

// Asking pays: over an epoch of 40 batches of 64×784 float32 (200 KB
// each), a consumer that asks for lent batches and releases them allocates
// a few float32 buffers, where one that does not gets (and allocates) one
// per batch.
func TestLendingAllocatesFewBuffers(t *testing.T) {
	noConfig(t)
	const n, width, batch = 40 * 64, 784, 64
	raw := make([]uint8, n*width)
	for i := range raw {
		raw[i] = uint8(i)
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "x", Data: nd.FromSlice(raw, n, width)}}, datasets.IndexableOptions{}))
	s := must(Flatten(must(Cast(must(ScaleAndShift(must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), batch)))), 1/255.0, 0, nil)), "float32", nil)), nil))
	allocated := func(lend bool) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		it := must(s.GetEpochIterator())
		if lend && !fuel.Lend(it) {
			t.Fatal("the pipeline does not lend")
		}
		for {
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if lend {
				d[0].Release()
			}
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	const buf = batch * width * 4
	plain, lent := allocated(false), allocated(true)
	if plain < 40*buf {
		t.Fatalf("a plain epoch allocated %d bytes, less than its 40 batches (%d)", plain, 40*buf)
	}
	if plain-lent < 30*buf {
		t.Fatalf("lending saved %d bytes of %d (plain %d), want at least 30 of the 40 float32 batches", plain-lent, 40*buf, plain)
	}
}
