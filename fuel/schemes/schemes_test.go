package schemes

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/numpyrand"
)

// The golden orders below were computed with Debian's numpy 1.24.2
// (/usr/bin/python3), as Fuel's tests compute theirs:
//
//	rs = numpy.random.RandomState(3)
//	x = list(range(7)); rs.shuffle(x)  # [4, 6, 5, 3, 1, 0, 2]
//	x = list(range(7)); rs.shuffle(x)  # [6, 4, 1, 2, 3, 5, 0] (same rs)
//	numpy.random.RandomState(3).shuffle(list(range(6))[::-1])  # [2, 0, 1, 4, 5, 3]
//	numpy.random.RandomState(1).shuffle(list(range(10)))       # [2, 9, 6, 4, 0, 3, 1, 7, 8, 5]
var (
	rs3Shuffle7       = []int{4, 6, 5, 3, 1, 0, 2}
	rs3Shuffle7Second = []int{6, 4, 1, 2, 3, 5, 0}
	rs3Shuffle6Rev    = []int{2, 0, 1, 4, 5, 3}
	rs1Shuffle10      = []int{2, 9, 6, 4, 0, 3, 1, 7, 8, 5}
)

func randomState3() *numpyrand.RandomState { return numpyrand.New(3) }

// drain returns the epoch's requests as index lists (slices expanded).
func drain(t *testing.T, it RequestIterator) [][]int {
	t.Helper()
	var out [][]int
	for {
		r, err := it.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, expand(r))
	}
}

func expand(r fuel.Request) []int {
	if r.Indices != nil {
		return r.Indices
	}
	var idx []int
	for i := r.Start; i < r.Stop; i++ {
		idx = append(idx, i)
	}
	return idx
}

func epoch(t *testing.T, s Scheme) [][]int {
	t.Helper()
	it, err := s.GetRequestIterator()
	if err != nil {
		t.Fatal(err)
	}
	return drain(t, it)
}

// must unwraps a constructor's result; a failure panics, failing the test.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func batchSizes(t *testing.T, s *Constant, max int) []int {
	t.Helper()
	it := must(s.GetBatchSizeIterator())
	var out []int
	for len(out) < max {
		n, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// Fuel's tests/test_schemes.py::test_constant_scheme.
func TestConstantScheme(t *testing.T) {
	for _, c := range []struct {
		batch, num, times int
		want              []int
	}{
		{3, 7, 0, []int{3, 3, 1}},
		{3, 9, 0, []int{3, 3, 3}},
		{3, 2, 0, []int{2}},
		{2, 0, 3, []int{2, 2, 2}},
		{3, 0, 1, []int{3}},
	} {
		s := must(ConstantScheme(c.batch, c.num, c.times))
		if got := batchSizes(t, s, 100); !slices.Equal(got, c.want) {
			t.Errorf("ConstantScheme(%d, num_examples=%d, times=%d) = %v, want %v", c.batch, c.num, c.times, got, c.want)
		}
		if s.RequestsExamples() {
			t.Error("ConstantScheme requests examples")
		}
	}
	endless := must(ConstantScheme(3, 0, 0))
	if got := batchSizes(t, endless, 10); len(got) != 10 || slices.Max(got) != 3 || slices.Min(got) != 3 {
		t.Errorf("endless ConstantScheme(3) = %v", got)
	}
	if _, err := ConstantScheme(10, 2, 2); err == nil {
		t.Error("ConstantScheme(10, 2, 2) gave no error")
	}
	if _, err := ConstantScheme(0, 7, 0); err == nil {
		t.Error("ConstantScheme(0, 7) gave no error")
	}

	// Resume in the middle of [3, 3, 1].
	s := must(ConstantScheme(3, 7, 0))
	it := must(s.GetBatchSizeIterator())
	it.Next()
	pos := it.Position()
	it2 := must(s.RestoreBatchSizeIterator(pos))
	var rest []int
	for n, err := it2.Next(); err == nil; n, err = it2.Next() {
		rest = append(rest, n)
	}
	if !slices.Equal(rest, []int{3, 1}) {
		t.Errorf("resumed ConstantScheme after one batch: %v, want [3 1]", rest)
	}
}

// Fuel's tests/test_schemes.py::test_sequential_scheme.
func TestSequentialScheme(t *testing.T) {
	for _, c := range []struct {
		ex    Examples
		batch int
		want  [][]int
	}{
		{Range(5), 3, [][]int{{0, 1, 2}, {3, 4}}},
		{Range(4), 2, [][]int{{0, 1}, {2, 3}}},
		{List([]int{4, 3, 2, 1, 0}), 3, [][]int{{4, 3, 2}, {1, 0}}},
		{List([]int{3, 2, 1, 0}), 2, [][]int{{3, 2}, {1, 0}}},
		{Range(0), 2, nil},
	} {
		s := must(SequentialScheme(c.ex, c.batch))
		if got := epoch(t, s); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SequentialScheme(%v, %d) = %v, want %v", c.ex, c.batch, got, c.want)
		}
		if s.RequestsExamples() {
			t.Error("SequentialScheme requests examples")
		}
	}
	// Over range(n) the requests are slices.
	it := must(must(SequentialScheme(Range(5), 3)).GetRequestIterator())
	if r, _ := it.Next(); r.Indices != nil || r.Start != 0 || r.Stop != 3 || r.Single {
		t.Errorf("first request over range(5): %+v, want the slice [0, 3)", r)
	}
	if _, err := SequentialScheme(Range(5), 0); err == nil {
		t.Error("batch size 0 gave no error")
	}
	if _, err := SequentialScheme(Range(-1), 2); err == nil {
		t.Error("negative examples gave no error")
	}
}

// Fuel's test_shuffled_scheme_unsorted_indices and _sorted_indices.
func TestShuffledScheme(t *testing.T) {
	s := must(ShuffledScheme(Range(7), 3, randomState3(), false))
	want := [][]int{rs3Shuffle7[:3], rs3Shuffle7[3:6], rs3Shuffle7[6:]}
	if got := epoch(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("first epoch = %v, want %v", got, want)
	}
	// The next epoch draws a new order from the same generator.
	want2 := [][]int{rs3Shuffle7Second[:3], rs3Shuffle7Second[3:6], rs3Shuffle7Second[6:]}
	if got := epoch(t, s); !reflect.DeepEqual(got, want2) {
		t.Errorf("second epoch = %v, want %v", got, want2)
	}
	if s.RequestsExamples() {
		t.Error("ShuffledScheme requests examples")
	}

	sorted := must(ShuffledScheme(Range(7), 3, randomState3(), true))
	wantSorted := [][]int{{4, 5, 6}, {0, 1, 3}, {2}}
	if got := epoch(t, sorted); !reflect.DeepEqual(got, wantSorted) {
		t.Errorf("sorted_indices epoch = %v, want %v", got, wantSorted)
	}

	// Explicit indices: list(range(6))[::-1] shuffled by RandomState(3).
	rev := List([]int{5, 4, 3, 2, 1, 0})
	s = must(ShuffledScheme(rev, 3, randomState3(), false))
	want = [][]int{rs3Shuffle6Rev[:3], rs3Shuffle6Rev[3:]}
	if got := epoch(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("shuffled reversed list = %v, want %v", got, want)
	}

	// No rng: Fuel's default, RandomState(1).
	t.Setenv("FUEL_CONFIG", filepath.Join(t.TempDir(), "none"))
	s = must(ShuffledScheme(Range(10), 10, nil, false))
	if got, want := epoch(t, s), [][]int{rs1Shuffle10}; !reflect.DeepEqual(got, want) {
		t.Errorf("default rng: %v, want RandomState(1)'s %v", got, want)
	}
}

// Fuel's test_shuffled_example_scheme and test_sequential_example_scheme.
func TestExampleSchemes(t *testing.T) {
	s := must(ShuffledExampleScheme(Range(7), randomState3()))
	var want [][]int
	for _, i := range rs3Shuffle7 {
		want = append(want, []int{i})
	}
	if got := epoch(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("ShuffledExampleScheme(7) = %v, want %v", got, want)
	}
	if !s.RequestsExamples() {
		t.Error("ShuffledExampleScheme does not request examples")
	}

	seq := must(SequentialExampleScheme(List([]int{6, 5, 4, 3, 2, 1, 0})))
	it := must(seq.GetRequestIterator())
	for want := 6; want >= 0; want-- {
		r, err := it.Next()
		if err != nil || !r.Single || !slices.Equal(r.Indices, []int{want}) {
			t.Fatalf("request %+v, %v; want the single example %d", r, err, want)
		}
	}
	if _, err := it.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last example: %v, want io.EOF", err)
	}
}

// A position saved mid-epoch, through JSON, restores the remaining
// requests exactly, without drawing from the generator.
func TestRestoreMidEpoch(t *testing.T) {
	mk := map[string]func() Scheme{
		"Sequential": func() Scheme { return must(SequentialScheme(Range(7), 3)) },
		"SequentialList": func() Scheme {
			return must(SequentialScheme(List([]int{9, 3, 5, 1, 7, 2, 8}), 3))
		},
		"Shuffled":          func() Scheme { return must(ShuffledScheme(Range(7), 3, randomState3(), false)) },
		"ShuffledSorted":    func() Scheme { return must(ShuffledScheme(Range(7), 2, randomState3(), true)) },
		"SequentialExample": func() Scheme { return must(SequentialExampleScheme(Range(7))) },
		"ShuffledExample":   func() Scheme { return must(ShuffledExampleScheme(Range(7), randomState3())) },
	}
	for name, newScheme := range mk {
		for k := 0; k <= 3; k++ {
			full := epoch(t, newScheme())

			s := newScheme()
			it := must(s.GetRequestIterator())
			for range k {
				if _, err := it.Next(); err != nil {
					t.Fatal(err)
				}
			}
			blob, err := json.Marshal(it.Position())
			if err != nil {
				t.Fatal(err)
			}
			var pos fuel.RequestPosition
			if err := json.Unmarshal(blob, &pos); err != nil {
				t.Fatal(err)
			}
			// Restoring puts the generator where the interrupted run's
			// stood after drawing the epoch's order, so later epochs agree.
			fresh := newScheme()
			r, shuffled := schemeRNG(fresh)
			it2, err := fresh.RestoreRequestIterator(pos)
			if orig, _ := schemeRNG(s); shuffled && r.State() != orig.State() {
				t.Errorf("%s: restoring did not restore the generator", name)
			}
			if err != nil {
				t.Fatalf("%s: restore after %d requests: %v", name, k, err)
			}
			rest := drain(t, it2)
			if want := full[k:]; len(rest)+len(want) > 0 && !reflect.DeepEqual(rest, want) {
				t.Errorf("%s: resumed after %d requests: %v, want %v (position %s)", name, k, rest, want, blob)
			}
			if a, b := epoch(t, s), epoch(t, fresh); !reflect.DeepEqual(a, b) {
				t.Errorf("%s: the epoch after a resumed one is %v, uninterrupted %v", name, b, a)
			}
		}
	}
}

func schemeRNG(s Scheme) (*numpyrand.RandomState, bool) {
	switch s := s.(type) {
	case *Shuffled:
		r, ok := s.RNG.(*numpyrand.RandomState)
		return r, ok
	case *ShuffledExample:
		r, ok := s.RNG.(*numpyrand.RandomState)
		return r, ok
	}
	return nil, false
}

func TestRestoreRejectsBadPositions(t *testing.T) {
	seq := must(SequentialScheme(Range(7), 3))
	shuf := must(ShuffledScheme(Range(7), 3, randomState3(), false))
	for _, c := range []struct {
		s    Scheme
		pos  fuel.RequestPosition
		want string
	}{
		{seq, fuel.RequestPosition{Next: 4}, "an epoch has 3 requests"},
		{seq, fuel.RequestPosition{Next: -1}, "cannot restore"},
		{seq, fuel.RequestPosition{Order: []int{0}}, "no order"},
		{shuf, fuel.RequestPosition{Next: 1}, "saved order has 0 indices"},
		{shuf, fuel.RequestPosition{Order: []int{0, 1, 2, 3, 4, 5, 5}}, "not a permutation"},
		{shuf, fuel.RequestPosition{Order: []int{6, 5, 4, 3, 2, 1, 0}, Next: 9}, "an epoch has 3 requests"},
	} {
		_, err := c.s.RestoreRequestIterator(c.pos)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("restore %+v: error %v, want %q", c.pos, err, c.want)
		}
	}
}
