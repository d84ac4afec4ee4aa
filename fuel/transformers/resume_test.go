package transformers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/datasets"
	"github.com/blocks-go/blocks/fuel/schemes"
	"github.com/blocks-go/blocks/fuel/streams"
	. "github.com/blocks-go/blocks/fuel/transformers"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// seqDataset holds n sequences of lengths 1 + (3*i mod 7) (int64 values
// 10*i + j) and a label per sequence.
func seqDataset(t *testing.T, n int) *datasets.IndexableDataset {
	t.Helper()
	lab := make([]int64, n)
	for i := range lab {
		lab[i] = int64(i % 3)
	}
	return must(datasets.NewIndexableDataset([]datasets.Source{{Name: "label", Data: nd.FromSlice(lab)}}, datasets.IndexableOptions{}))
}

// seqStream is an example stream of variable-length sequences with a
// label: a Mapping adds the sequence computed from the label's index.
func seqStream(t *testing.T, n int, scheme schemes.Scheme) fuel.Stream {
	t.Helper()
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(i)
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "i", Data: nd.FromSlice(idx)}}, datasets.IndexableOptions{}))
	s := must(streams.DataStream(ds, scheme))
	m := must(Mapping(s, func(d []*nd.Array) ([]*nd.Array, error) {
		i := int(d[0].Flat(0))
		l := 1 + (3*i)%7
		seq := make([]int64, l)
		for j := range seq {
			seq[j] = int64(10*i + j)
		}
		return []*nd.Array{nd.FromSlice(seq), nd.Scalar(nd.Int64, float64(i%3))}, nil
	}, []string{"seq", "label"}))
	return must(FilterSources(m, []string{"seq", "label"}))
}

// imageStream is a batch stream of 4-d uint8 images (batch, 2, 5, 6).
func imageStream(t *testing.T, n, batch int) fuel.Stream {
	t.Helper()
	px := make([]uint8, n*2*5*6)
	for i := range px {
		px[i] = uint8(i * 7)
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: nd.FromSlice(px, n, 2, 5, 6)}},
		datasets.IndexableOptions{AxisLabels: map[string][]string{"features": {"batch", "channel", "height", "width"}}}))
	return must(streams.DataStream(ds, must(schemes.SequentialScheme(schemes.Range(n), batch))))
}

func items(t *testing.T, it fuel.EpochIterator, max int) [][]*nd.Array {
	t.Helper()
	var out [][]*nd.Array
	for len(out) < max {
		d, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func sameItems(a, b [][]*nd.Array) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d items, want %d", len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Errorf("item %d: %d arrays, want %d", i, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			if !nd.Equal(a[i][j], b[i][j]) {
				return fmt.Errorf("item %d source %d: %v, want %v", i, j, a[i][j], b[i][j])
			}
		}
	}
	return nil
}

// pipelines builds, afresh on every call, one pipeline per transformer
// and scheme, each with its randomness seeded.
func pipelines(t *testing.T) map[string]func() fuel.Stream {
	rs := func(seed uint32) *numpyrand.RandomState { return numpyrand.New(seed) }
	return map[string]func() fuel.Stream{
		"Sequential": func() fuel.Stream { return toyStream(t, 2) },
		"Shuffled": func() fuel.Stream {
			return imageStreamScheme(t, must(schemes.ShuffledScheme(schemes.Range(9), 2, rs(3), false)))
		},
		"ShuffledExample": func() fuel.Stream {
			return imageStreamScheme(t, must(schemes.ShuffledExampleScheme(schemes.Range(9), rs(4))))
		},
		"Concatenated": func() fuel.Stream {
			r := rs(5)
			return imageStreamScheme(t, must(schemes.ConcatenatedScheme([]schemes.Scheme{
				must(schemes.ShuffledScheme(schemes.Range(4), 3, r, false)),
				must(schemes.SequentialScheme(schemes.List([]int{8, 7, 6, 5, 4}), 2)),
			})))
		},
		"Batch": func() fuel.Stream {
			return must(Batch(seqStream(t, 11, must(schemes.ShuffledExampleScheme(schemes.Range(11), rs(6)))), must(schemes.ConstantScheme(3, 0, 0)), 0))
		},
		"BatchStrict1": func() fuel.Stream {
			return must(Batch(seqStream(t, 11, nil), must(schemes.ConstantScheme(3, 0, 0)), 1))
		},
		"Unpack": func() fuel.Stream {
			return must(Unpack(imageStreamScheme(t, must(schemes.ShuffledScheme(schemes.Range(9), 4, rs(7), false)))))
		},
		"Padding": func() fuel.Stream {
			return must(Padding(must(Batch(seqStream(t, 10, nil), must(schemes.ConstantScheme(4, 0, 0)), 0)), []string{"seq"}, ""))
		},
		"Filter": func() fuel.Stream {
			return must(Filter(seqStream(t, 12, nil), func(d []*nd.Array) (bool, error) { return d[0].Shape[0]%2 == 1, nil }))
		},
		"Cache": func() fuel.Stream {
			return must(Cache(imageStream(t, 9, 4), must(schemes.ConstantScheme(3, 0, 0))))
		},
		"SortMapping": func() fuel.Stream {
			b := must(Batch(seqStream(t, 10, nil), must(schemes.ConstantScheme(4, 0, 0)), 0))
			key := func(ex []*nd.Array) (any, error) { return ex[0].Shape[0], nil }
			cmp := func(a, b any) (int, error) { return a.(int) - b.(int), nil }
			return must(Mapping(b, SortMapping(key, cmp, true), nil))
		},
		"Merge": func() fuel.Stream {
			a := imageStreamScheme(t, must(schemes.ShuffledExampleScheme(schemes.Range(9), rs(8))))
			return must(Merge([]fuel.Stream{a, seqStream(t, 7, nil)}, []string{"f", "s", "l"}, nil))
		},
		"MultiProcessing": func() fuel.Stream {
			c := must(RandomFixedSizeCrop(imageStream(t, 9, 2), [2]int{3, 4}, rs(9), nil))
			return must(MultiProcessing(c, 2))
		},
		"Window": func() fuel.Stream {
			return must(Window(must(FilterSources(seqStream(t, 8, nil), []string{"seq"})), WindowOptions{Offset: 1, SourceWindow: 3, TargetWindow: 3, Overlapping: true}))
		},
		"NGrams": func() fuel.Stream {
			return must(NGrams(must(FilterSources(seqStream(t, 8, nil), []string{"seq"})), 2, ""))
		},
		"RandomFixedSizeCrop": func() fuel.Stream {
			return must(RandomFixedSizeCrop(imageStream(t, 9, 4), [2]int{4, 4}, rs(10), nil))
		},
		"RandomFixedSizeCropExamples": func() fuel.Stream {
			return must(RandomFixedSizeCrop(must(Unpack(imageStream(t, 9, 4))), [2]int{2, 5}, rs(11), nil))
		},
		"Random2DRotation": func() fuel.Stream {
			return must(Random2DRotation(imageStream(t, 9, 4), math.Pi, "", rs(12), nil))
		},
		"MinimumImageDimensions": func() fuel.Stream {
			return must(MinimumImageDimensions(imageStream(t, 9, 4), [2]int{7, 7}, "", nil))
		},
		"ImagesFromBytes": func() fuel.Stream {
			return must(ImagesFromBytes(pngStream(t), []string{"png"}, "RGB"))
		},
		"IterableDataset+Batch+Padding": func() fuel.Stream {
			s := iterStream(t, nil, "data", [][]int64{{1}, {2, 3}, {}, {4, 5, 6}, {7}, {8, 9}, {10}})
			return must(Padding(must(Batch(s, must(schemes.ConstantScheme(2, 0, 0)), 0)), nil, ""))
		},
		"RaggedIndexable+Shuffled+Padding": func() fuel.Stream {
			var parts []*nd.Array
			for i := 0; i < 9; i++ {
				seq := make([]float32, 1+(5*i)%4)
				for j := range seq {
					seq[j] = float32(i) + float32(j)/10
				}
				parts = append(parts, nd.FromSlice(seq))
			}
			ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "seq", Data: nd.Objects(parts)}}, datasets.IndexableOptions{}))
			s := must(streams.DataStream(ds, must(schemes.ShuffledScheme(schemes.Range(9), 4, rs(13), false))))
			return must(Padding(s, nil, ""))
		},
		"Flatten+ScaleAndShift+Cast": func() fuel.Stream {
			return must(Cast(must(ScaleAndShift(must(Flatten(imageStream(t, 9, 4), nil)), 0.5, -1, nil)), "float32", nil))
		},
	}
}

func imageStreamScheme(t *testing.T, s schemes.Scheme) fuel.Stream {
	t.Helper()
	px := make([]uint8, 9*2*5*6)
	for i := range px {
		px[i] = uint8(i * 7)
	}
	ds := must(datasets.NewIndexableDataset([]datasets.Source{{Name: "features", Data: nd.FromSlice(px, 9, 2, 5, 6)}}, datasets.IndexableOptions{}))
	return must(streams.DataStream(ds, s))
}

// pngStream is an example stream of PNG files (as uint8 vectors).
func pngStream(t *testing.T) fuel.Stream {
	t.Helper()
	var parts []*nd.Array
	for i := 0; i < 5; i++ {
		img := image.NewNRGBA(image.Rect(0, 0, 3+i, 2))
		for j := range img.Pix {
			img.Pix[j] = uint8(j*13 + i)
			if j%4 == 3 {
				img.Pix[j] = 255
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, nd.FromSlice(buf.Bytes()))
	}
	return &sliceStream{sources: []string{"png"}, items: parts}
}

// sliceStream is a resumable example stream over ready-made arrays.
type sliceStream struct {
	sources []string
	items   []*nd.Array
}

func (s *sliceStream) Sources() []string               { return s.sources }
func (s *sliceStream) AxisLabels() map[string][]string { return nil }
func (s *sliceStream) ProducesExamples() bool          { return true }
func (s *sliceStream) GetEpochIterator() (fuel.EpochIterator, error) {
	return &sliceIter{s: s}, nil
}
func (s *sliceStream) ResumeEpochIterator(st fuel.IteratorState) (fuel.EpochIterator, error) {
	return &sliceIter{s: s, next: st.Served}, nil
}

type sliceIter struct {
	s    *sliceStream
	next int
}

func (it *sliceIter) Next() ([]*nd.Array, error) {
	if it.next >= len(it.s.items) {
		return nil, io.EOF
	}
	it.next++
	return []*nd.Array{it.s.items[it.next-1]}, nil
}
func (it *sliceIter) State() (fuel.IteratorState, error) {
	return fuel.IteratorState{Served: it.next}, nil
}

// For every scheme and transformer: the position at item k of an epoch,
// through JSON, restored in a freshly built pipeline, gives bit-identical
// items for the rest of that epoch and for the next epoch.
func TestResumeEveryTransformer(t *testing.T) {
	noConfig(t)
	for name, mk := range pipelines(t) {
		t.Run(name, func(t *testing.T) {
			ref := mk()
			e1 := items(t, must(ref.GetEpochIterator()), 1000)
			e2 := items(t, must(ref.GetEpochIterator()), 1000)
			if len(e1) < 2 {
				t.Fatalf("epoch of %d items: too short to test", len(e1))
			}
			for k := 0; k <= len(e1); k++ {
				s := mk()
				it := must(s.GetEpochIterator())
				if err := sameItems(items(t, it, k), e1[:k]); err != nil {
					t.Fatalf("first %d items: %v", k, err)
				}
				st, err := it.(fuel.StatefulIterator).State()
				if err != nil {
					t.Fatalf("state at %d: %v", k, err)
				}
				// The state stays valid while the iterator goes on (buffers
				// are saved by reference and never modified).
				items(t, it, 1000)
				blob := must(fuel.MarshalState(st))
				st2 := must(fuel.UnmarshalState(blob))
				fresh := mk()
				it2, err := fresh.(fuel.ResumableStream).ResumeEpochIterator(st2)
				if err != nil {
					t.Fatalf("resume at %d: %v", k, err)
				}
				if err := sameItems(items(t, it2, 1000), e1[k:]); err != nil {
					t.Fatalf("resumed at item %d: %v", k, err)
				}
				if err := sameItems(items(t, must(fresh.GetEpochIterator()), 1000), e2); err != nil {
					t.Fatalf("epoch after resuming at %d: %v", k, err)
				}
			}
		})
	}
}

func ints(a *nd.Array) []int64 {
	out := make([]int64, a.Size())
	for i := range out {
		out[i] = int64(a.Flat(i))
	}
	return out
}

func TestBatchStrictness(t *testing.T) {
	noConfig(t)
	sizes := func(strictness int) ([]int, error) {
		b := must(Batch(seqStream(t, 7, nil), must(schemes.ConstantScheme(3, 0, 0)), strictness))
		it := must(b.GetEpochIterator())
		var out []int
		for {
			d, err := it.Next()
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			out = append(out, d[0].Shape[0])
		}
	}
	if got, err := sizes(0); err != nil || !reflect.DeepEqual(got, []int{3, 3, 1}) {
		t.Errorf("strictness 0: %v %v, want [3 3 1]", got, err)
	}
	if got, err := sizes(1); err != nil || !reflect.DeepEqual(got, []int{3, 3}) {
		t.Errorf("strictness 1: %v %v, want [3 3]", got, err)
	}
	if got, err := sizes(2); !errors.Is(err, ErrPartialBatch) || !reflect.DeepEqual(got, []int{3, 3}) {
		t.Errorf("strictness 2: %v %v, want [3 3] then ErrPartialBatch", got, err)
	}
	// Ragged examples make an object batch; equal ones a regular one.
	b := must(Batch(seqStream(t, 7, nil), must(schemes.ConstantScheme(3, 0, 0)), 0))
	first := items(t, must(b.GetEpochIterator()), 1)[0]
	if first[0].DType() != nd.Object || first[1].DType() != nd.Int64 || !reflect.DeepEqual(first[1].Shape, []int{3}) {
		t.Errorf("batch dtypes %s %s%v", first[0].DType(), first[1].DType(), first[1].Shape)
	}
	if _, err := Batch(toyStream(t, 2), must(schemes.ConstantScheme(3, 0, 0)), 0); err == nil {
		t.Error("Batch over a batch stream gave no error")
	}
}

func TestPaddingMasks(t *testing.T) {
	noConfig(t)
	p := must(Padding(must(Batch(seqStream(t, 3, nil), must(schemes.ConstantScheme(3, 0, 0)), 0)), []string{"seq"}, ""))
	if got := p.Sources(); !reflect.DeepEqual(got, []string{"seq", "seq_mask", "label"}) {
		t.Errorf("sources %v", got)
	}
	d := items(t, must(p.GetEpochIterator()), 1)[0]
	// Lengths 1, 4, 7 (1 + 3i mod 7).
	if !reflect.DeepEqual(d[0].Shape, []int{3, 7}) || d[0].DType() != nd.Int64 {
		t.Fatalf("padded %s%v", d[0].DType(), d[0].Shape)
	}
	want := []int64{0, 0, 0, 0, 0, 0, 0, 10, 11, 12, 13, 0, 0, 0, 20, 21, 22, 23, 24, 25, 26}
	if got := ints(d[0]); !reflect.DeepEqual(got, want) {
		t.Errorf("padded %v, want %v", got, want)
	}
	wantMask := []int64{1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}
	if got := ints(d[1]); d[1].DType() != nd.Float32 || !reflect.DeepEqual(got, wantMask) {
		t.Errorf("mask %s %v, want float32 %v", d[1].DType(), got, wantMask)
	}
}

func TestCacheSizes(t *testing.T) {
	// Batches of 4 (4, 4, 1 of 9) served in requests of 3: Fuel reads one
	// batch when the cache is short, so the cache holds 1, 2, 0, 1, 0.
	c := must(Cache(imageStream(t, 9, 4), must(schemes.ConstantScheme(3, 0, 0))))
	it := must(c.GetEpochIterator())
	var got, cache []int
	for {
		d, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d[0].Shape[0])
		cache = append(cache, it.(interface{ CacheSize() int }).CacheSize())
	}
	if !reflect.DeepEqual(got, []int{3, 3, 3}) || !reflect.DeepEqual(cache, []int{1, 2, 0}) {
		t.Errorf("Cache batch sizes %v (cache %v), want [3 3 3] ([1 2 0])", got, cache)
	}
	c = must(Cache(imageStream(t, 9, 2), must(schemes.ConstantScheme(3, 0, 0))))
	it = must(c.GetEpochIterator())
	got = nil
	for _, d := range items(t, it, 100) {
		got = append(got, d[0].Shape[0])
	}
	// Requests of 3 from batches of 2: one batch is read per request, so
	// every request gets what one batch holds.
	if want := []int{2, 2, 2, 2, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Cache over batches of 2: %v, want %v", got, want)
	}
}

func TestWindowAndNGrams(t *testing.T) {
	noConfig(t)
	seq := &sliceStream{sources: []string{"words"}, items: []*nd.Array{
		nd.FromSlice([]int64{1, 2, 3, 4, 5, 6}), nd.FromSlice([]int64{7, 8}), nd.FromSlice([]int64{9, 10, 11, 12})}}
	all := func(s fuel.Stream) [][2][]int64 {
		var out [][2][]int64
		for _, d := range items(t, must(s.GetEpochIterator()), 100) {
			out = append(out, [2][]int64{ints(d[0]), ints(d[1])})
		}
		return out
	}
	// Fuel's docs: source_window=3, target_window=3, offset 1, overlapping:
	// [1,2,3] -> [2,3,4], ...
	w := must(Window(seq, WindowOptions{Offset: 1, SourceWindow: 3, TargetWindow: 3, Overlapping: true}))
	want := [][2][]int64{{{1, 2, 3}, {2, 3, 4}}, {{2, 3, 4}, {3, 4, 5}}, {{3, 4, 5}, {4, 5, 6}}, {{9, 10, 11}, {10, 11, 12}}}
	if got := all(w); !reflect.DeepEqual(got, want) {
		t.Errorf("Window = %v, want %v", got, want)
	}
	if got := w.Sources(); !reflect.DeepEqual(got, []string{"words", "targets"}) {
		t.Errorf("Window sources %v", got)
	}
	// Not overlapping, negative offset, step 2.
	w = must(Window(seq, WindowOptions{Offset: -2, SourceWindow: 2, TargetWindow: 1, StepSize: 2}))
	want = [][2][]int64{{{1, 2}, {1}}, {{3, 4}, {3}}, {{5, 6}, {5}}, {{7, 8}, {7}}, {{9, 10}, {9}}, {{11, 12}, {11}}}
	if got := all(w); !reflect.DeepEqual(got, want) {
		t.Errorf("Window(offset=-2, step_size=2) = %v, want %v", got, want)
	}
	// Trigrams: a sequence of length L gives L-3 of them.
	g := must(NGrams(seq, 3, "next"))
	got := all(g)
	if len(got) != (6-3)+0+(4-3) {
		t.Errorf("%d trigrams, want 4: %v", len(got), got)
	}
	if !reflect.DeepEqual(got[0], [2][]int64{{1, 2, 3}, {4}}) || !reflect.DeepEqual(got[3], [2][]int64{{9, 10, 11}, {12}}) {
		t.Errorf("trigrams %v", got)
	}
	d := items(t, must(g.GetEpochIterator()), 1)[0]
	if d[1].NDim() != 0 {
		t.Errorf("an n-gram's target has shape %v, want a scalar", d[1].Shape)
	}
}

// Random crops draw numpy's numbers: checked against offsets computed in
// the test from the same generator the way Fuel draws them.
func TestRandomFixedSizeCropDraws(t *testing.T) {
	c := must(RandomFixedSizeCrop(imageStream(t, 4, 4), [2]int{3, 4}, numpyrand.New(1), nil))
	d := items(t, must(c.GetEpochIterator()), 1)[0][0]
	ref := numpyrand.New(1)
	var offW, offH [4]int
	for i := range offW {
		offW[i] = int(ref.Randint(0, 3)) // random_integers(0, 6-4)
	}
	for i := range offH {
		offH[i] = int(ref.Randint(0, 3)) // random_integers(0, 5-3)
	}
	src := items(t, must(imageStream(t, 4, 4).GetEpochIterator()), 1)[0][0]
	for b := 0; b < 4; b++ {
		for ch := 0; ch < 2; ch++ {
			for y := 0; y < 3; y++ {
				for x := 0; x < 4; x++ {
					got := d.Flat(((b*2+ch)*3+y)*4 + x)
					want := src.Flat(((b*2+ch)*5+y+offH[b])*6 + x + offW[b])
					if got != want {
						t.Fatalf("crop %d ch %d (%d,%d): %v, want %v", b, ch, y, x, got, want)
					}
				}
			}
		}
	}
}

func TestImagesFromBytes(t *testing.T) {
	s := must(ImagesFromBytes(pngStream(t), nil, "RGB"))
	d := items(t, must(s.GetEpochIterator()), 1)[0][0]
	if !reflect.DeepEqual(d.Shape, []int{3, 2, 3}) || d.DType() != nd.Uint8 {
		t.Fatalf("image %s%v, want uint8 (3, 2, 3)", d.DType(), d.Shape)
	}
	// Pixel (0, 1) of image 0 has R = Pix[4] = 52, G = 65, B = 78.
	if d.Flat(1) != 52 || d.Flat(6+1) != 65 || d.Flat(12+1) != 78 {
		t.Errorf("pixels %v", d)
	}
	bad := &sliceStream{sources: []string{"png"}, items: []*nd.Array{nd.FromSlice([]uint8{1, 2, 3})}}
	if _, err := must(ImagesFromBytes(bad, nil, "RGB")).GetEpochIterator(); err != nil {
		t.Fatal(err)
	}
	it := must(must(ImagesFromBytes(bad, nil, "RGB")).GetEpochIterator())
	if _, err := it.Next(); err == nil {
		t.Error("decoding non-image bytes gave no error")
	}
}

func TestMultiProcessingStopsAndReportsErrors(t *testing.T) {
	bad := must(Mapping(toyStream(t, 1), func(d []*nd.Array) ([]*nd.Array, error) {
		if d[1].Flat(0) < 0 {
			return nil, errors.New("negative")
		}
		return d, nil
	}, nil))
	it := must(must(MultiProcessing(bad, 5)).GetEpochIterator())
	var err error
	for i := 0; i < 5 && err == nil; i++ {
		_, err = it.Next()
	}
	if err == nil || errors.Is(err, io.EOF) {
		t.Errorf("error %v, want the mapping's", err)
	}
	// A panic in the wrapped pipeline is an error, not a crash.
	boom := must(Mapping(toyStream(t, 1), func(d []*nd.Array) ([]*nd.Array, error) {
		var x []int
		_ = x[len(d)]
		return d, nil
	}, nil))
	if _, err := must(must(MultiProcessing(boom, 2)).GetEpochIterator()).Next(); err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("panicking pipeline: %v", err)
	}
	// An abandoned epoch's goroutine stops on Close, or when the iterator
	// is collected.
	it = must(must(MultiProcessing(toyStream(t, 1), 1)).GetEpochIterator())
	it.(interface{ Close() }).Close()
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		must(must(MultiProcessing(toyStream(t, 1), 1)).GetEpochIterator())
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after dropping 5 unfinished epochs, %d before", n, before)
	}
}

var _ = json.Marshal
