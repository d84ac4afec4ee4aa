package schemes

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/numpyrand"
)

func TestConcatenatedScheme(t *testing.T) {
	a := must(SequentialScheme(Range(5), 3))
	b := must(SequentialScheme(List([]int{7, 8, 9}), 2))
	c := must(ConcatenatedScheme([]Scheme{a, b}))
	want := [][]int{{0, 1, 2}, {3, 4}, {7, 8}, {9}}
	if got := epoch(t, c); !reflect.DeepEqual(got, want) {
		t.Errorf("ConcatenatedScheme = %v, want %v", got, want)
	}
	if _, err := ConcatenatedScheme([]Scheme{a, must(SequentialExampleScheme(Range(3)))}); err == nil {
		t.Error("mixing batch and example schemes gave no error")
	}
	// Resume at every request, with a shuffled part sharing one generator.
	mk := func() Scheme {
		r := numpyrand.New(5)
		return must(ConcatenatedScheme([]Scheme{
			must(ShuffledScheme(Range(5), 2, r, false)),
			must(ShuffledScheme(List([]int{10, 11, 12}), 2, r, true)),
		}))
	}
	full := epoch(t, mk())
	for k := 0; k <= len(full); k++ {
		s := mk()
		it := must(s.GetRequestIterator())
		for range k {
			it.Next()
		}
		blob := must(json.Marshal(it.Position()))
		var pos fuel.RequestPosition
		if err := json.Unmarshal(blob, &pos); err != nil {
			t.Fatal(err)
		}
		fresh := mk()
		rest := drain(t, must(fresh.RestoreRequestIterator(pos)))
		if want := full[k:]; len(rest)+len(want) > 0 && !reflect.DeepEqual(rest, want) {
			t.Errorf("resumed after %d: %v, want %v", k, rest, want)
		}
		if a, b := epoch(t, s), epoch(t, fresh); !reflect.DeepEqual(a, b) {
			t.Errorf("after %d: next epoch %v, uninterrupted %v", k, b, a)
		}
	}
}

func TestCrossValidation(t *testing.T) {
	mk := func(ex Examples) (Scheme, error) { return SequentialScheme(ex, 2) }
	folds := must(CrossValidation(mk, 6, 3, true))
	want := []struct{ train, valid [][]int }{
		{[][]int{{2, 3}, {4, 5}}, [][]int{{0, 1}}},
		{[][]int{{0, 1}, {4, 5}}, [][]int{{2, 3}}},
		{[][]int{{0, 1}, {2, 3}}, [][]int{{4, 5}}},
	}
	for i, f := range folds {
		if got := epoch(t, f.Train); !reflect.DeepEqual(got, want[i].train) {
			t.Errorf("fold %d train %v, want %v", i, got, want[i].train)
		}
		if got := epoch(t, f.Valid); !reflect.DeepEqual(got, want[i].valid) {
			t.Errorf("fold %d valid %v, want %v", i, got, want[i].valid)
		}
	}
	if _, err := CrossValidation(mk, 7, 3, true); err == nil {
		t.Error("strict cross_validation of 7 examples in 3 folds gave no error")
	}
	// Fuel's error cases, as its Python arithmetic gives them.
	for _, c := range []struct {
		n, k    int
		strict  bool
		err     string
		nFolds  int
		sizeSum int
	}{
		{10, 3, true, "ValueError: 10 examples are not divisible in 3 evenly-sized folds. To allow this, have a look at the `strict` argument.", 0, 0},
		{10, 0, true, "ZeroDivisionError", 0, 0},
		{10, 0, false, "", 0, 0},
		{10, -5, true, "", 0, 0}, // 10 % -5 == 0 in Python; xrange(-5) is empty
		{10, -3, true, "ValueError: 10 examples are not divisible in -3", 0, 0},
		{-4, 2, true, "", 2, 0},
	} {
		folds, err := CrossValidation(mk, c.n, c.k, c.strict)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("cross_validation(%d, %d, strict=%v): error %v, want %q", c.n, c.k, c.strict, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("cross_validation(%d, %d, strict=%v): %v", c.n, c.k, c.strict, err)
		case c.err == "" && len(folds) != c.nFolds:
			t.Errorf("cross_validation(%d, %d, strict=%v): %d folds, want %d", c.n, c.k, c.strict, len(folds), c.nFolds)
		}
		for _, f := range folds {
			if f.Size != 0 {
				t.Errorf("cross_validation(%d, %d): a fold of size %d, want 0", c.n, c.k, f.Size)
			}
		}
	}
	loose := must(CrossValidation(mk, 7, 3, false))
	if sizes := []int{loose[0].Size, loose[1].Size, loose[2].Size}; !reflect.DeepEqual(sizes, []int{2, 2, 3}) {
		t.Errorf("fold sizes %v, want [2 2 3]", sizes)
	}
}

// Shuffled schemes give Python Fuel's orders: numpy (Debian's
// /usr/bin/python3) does what Fuel's ShuffledScheme.get_request_iterator
// does, for three epochs of each case.
func TestShuffledOrdersAgainstNumpy(t *testing.T) {
	const py = `
import json, sys, numpy
out = []
for seed, n, bs, sort in json.loads(sys.argv[1]):
    rng = numpy.random.RandomState(seed)
    epochs = []
    for e in range(3):
        idx = list(range(n)); rng.shuffle(idx)
        b = [idx[i:i+bs] for i in range(0, n, bs)]
        epochs.append([sorted(x) for x in b] if sort else b)
    out.append(epochs)
print(json.dumps(out))
`
	cases := [][4]int{{1, 10, 3, 0}, {1, 1000, 7, 1}, {1234, 257, 256, 0}, {0, 5, 1, 0}, {4294967295, 60, 8, 1}}
	arg := must(json.Marshal(cases))
	raw, err := exec.Command("/usr/bin/python3", "-c", py, string(arg)).Output()
	if err != nil {
		t.Skipf("Debian's python3-numpy is not available (%v)", err)
	}
	var want [][][][]int
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		s := must(ShuffledScheme(Range(c[1]), c[2], numpyrand.New(uint32(c[0])), c[3] == 1))
		for e := range 3 {
			if got := epoch(t, s); !reflect.DeepEqual(got, want[i][e]) {
				t.Errorf("ShuffledScheme(%d, %d, RandomState(%d), sorted_indices=%v) epoch %d differs from numpy", c[1], c[2], c[0], c[3] == 1, e)
			}
		}
		ex := must(ShuffledExampleScheme(Range(c[1]), numpyrand.New(uint32(c[0]))))
		for e := range 3 {
			var flat [][]int
			for _, b := range want[i][e] {
				if c[3] == 1 {
					break
				}
				for _, j := range b {
					flat = append(flat, []int{j})
				}
			}
			if got := epoch(t, ex); c[3] == 0 && !reflect.DeepEqual(got, flat) {
				t.Errorf("ShuffledExampleScheme(%d, RandomState(%d)) epoch %d differs from numpy", c[1], c[0], e)
			}
		}
	}
}
