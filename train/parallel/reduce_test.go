package parallel

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestSplitAndNodes(t *testing.T) {
	for _, c := range []struct{ lo, hi, m int }{{0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {0, 5, 4}, {4, 12, 8}, {8, 12, 10}, {0, 12, 8}} {
		if got := Split(c.lo, c.hi); got != c.m {
			t.Errorf("Split(%d, %d) = %d, want %d", c.lo, c.hi, got, c.m)
		}
	}
	// The nodes of the tree over 6: [0,6) [0,4) [4,6) [0,2) [2,4) and the leaves.
	nodes := map[[2]int]bool{{0, 6}: true, {0, 4}: true, {4, 6}: true, {0, 2}: true, {2, 4}: true}
	for i := range 6 {
		nodes[[2]int{i, i + 1}] = true
	}
	for lo := range 6 {
		for hi := lo + 1; hi <= 6; hi++ {
			if got := IsNode(lo, hi, 6); got != nodes[[2]int{lo, hi}] {
				t.Errorf("IsNode(%d, %d, 6) = %v", lo, hi, got)
			}
		}
	}
}

func TestPlan(t *testing.T) {
	for _, c := range []struct {
		k, n int
		ok   bool
	}{{1, 1, true}, {4, 1, true}, {4, 2, true}, {4, 4, true}, {6, 3, true}, {12, 3, true}, {8, 4, true},
		{6, 2, false}, {3, 2, false}, {1, 2, false}, {10, 2, false}, {0, 1, false}} {
		_, err := NewPlan(c.k, c.n, 0)
		if (err == nil) != c.ok {
			t.Errorf("NewPlan(%d, %d): %v", c.k, c.n, err)
		}
	}
	p, err := NewPlan(8, 4, 2)
	if err != nil || p.Lo != 4 || p.Hi != 6 {
		t.Fatalf("NewPlan(8, 4, 2) = %+v, %v", p, err)
	}
	sizes, off := Sizes(10, 4)
	if !slices.Equal(sizes, []int{3, 3, 2, 2}) || !slices.Equal(off, []int{0, 3, 6, 8, 10}) {
		t.Fatalf("Sizes(10, 4) = %v %v", sizes, off)
	}
}

// vectors are K random vectors of l float32 of mixed magnitudes, so that
// the order of the additions shows in the bits.
func vectors(k, l int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	vs := make([][]float32, k)
	for i := range vs {
		vs[i] = make([]float32, l)
		for j := range vs[i] {
			vs[i][j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
		}
	}
	return vs
}

func clone2(vs [][]float32) [][]float32 {
	out := make([][]float32, len(vs))
	for i, v := range vs {
		out[i] = slices.Clone(v)
	}
	return out
}

// reduceOn runs Reduce on n goroutines of a local group, each with its
// block of vs, and returns every member's result.
func reduceOn(t *testing.T, n int, vs [][]float32) [][]float32 {
	t.Helper()
	k := len(vs)
	comms := NewLocalGroup(n, 10*time.Second)
	outs := make([][]float32, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			plan, err := NewPlan(k, n, r)
			if err != nil {
				errs[r] = err
				return
			}
			outs[r] = make([]float32, len(vs[0]))
			errs[r] = Reduce(comms[r], plan, clone2(vs[plan.Lo:plan.Hi]), outs[r])
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%d processes, rank %d: %v", n, r, err)
		}
	}
	return outs
}

func TestReduceSameBitsAnyNumberOfProcesses(t *testing.T) {
	for _, c := range []struct{ k, l int }{{8, 1001}, {4, 3}, {12, 257}, {2, 1}} {
		vs := vectors(c.k, c.l, uint64(c.k*c.l))
		// The canonical tree written out independently (for K=8 and 4 the
		// balanced tree, for 12 the tree (8)+(4), for 2 a pair).
		want := make([]float32, c.l)
		for j := range want {
			x := func(i int) float32 { return vs[i][j] }
			switch c.k {
			case 8:
				want[j] = ((x(0) + x(1)) + (x(2) + x(3))) + ((x(4) + x(5)) + (x(6) + x(7)))
			case 4:
				want[j] = (x(0) + x(1)) + (x(2) + x(3))
			case 12:
				want[j] = (((x(0) + x(1)) + (x(2) + x(3))) + ((x(4) + x(5)) + (x(6) + x(7)))) + ((x(8) + x(9)) + (x(10) + x(11)))
			case 2:
				want[j] = x(0) + x(1)
			}
		}
		single := make([]float32, c.l)
		if err := Reduce(Single{}, Plan{K: c.k, N: 1, Hi: c.k}, clone2(vs), single); err != nil {
			t.Fatal(err)
		}
		if !sameBits(single, want) {
			t.Fatalf("K=%d: one process differs from the canonical tree", c.k)
		}
		for n := 2; n <= c.k; n++ {
			if _, err := NewPlan(c.k, n, 0); err != nil {
				continue
			}
			for r, out := range reduceOn(t, n, vs) {
				if !sameBits(out, want) {
					t.Errorf("K=%d on %d processes: rank %d's sum differs from one process's", c.k, n, r)
				}
			}
		}
	}
	// The test can fail: the left-to-right sum differs in some bit.
	vs := vectors(8, 1001, 8008)
	seq := make([]float32, 1001)
	for _, v := range vs {
		for j := range seq {
			seq[j] += v[j]
		}
	}
	tree := make([]float32, 1001)
	_ = Reduce(Single{}, Plan{K: 8, N: 1, Hi: 8}, clone2(vs), tree)
	if sameBits(seq, tree) {
		t.Fatal("the sequential and the tree order give the same bits: the test data does not show the order")
	}
}

func sameBits(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

func TestReduceFloat64(t *testing.T) {
	vs := [][]float64{{1e16, 1}, {1, -1e16}, {-1e16, 3}, {1, 5}}
	x := func(i, j int) float64 { return vs[i][j] } // not constants: Go folds those exactly
	want := []float64{(x(0, 0) + x(1, 0)) + (x(2, 0) + x(3, 0)), (x(0, 1) + x(1, 1)) + (x(2, 1) + x(3, 1))}
	if want[0] != 0 {
		t.Fatalf("1e16+1 should round to 1e16: %v", want)
	}
	comms := NewLocalGroup(2, 5*time.Second)
	var wg sync.WaitGroup
	outs := make([][]float64, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := NewPlan(4, 2, r)
			outs[r] = make([]float64, 2)
			parts := [][]float64{slices.Clone(vs[p.Lo]), slices.Clone(vs[p.Lo+1])}
			if err := Reduce(comms[r], p, parts, outs[r]); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for r := range 2 {
		if !slices.Equal(outs[r], want) {
			t.Errorf("rank %d: %v, want %v", r, outs[r], want)
		}
	}
}

func TestCollectiveTimeout(t *testing.T) {
	comms := NewLocalGroup(2, 200*time.Millisecond)
	t0 := time.Now()
	err := comms[0].Allgather([]byte{1}, make([]byte, 2)) // rank 1 never comes
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("the timeout took %v", d)
	}
}

func TestExchangedBytes(t *testing.T) {
	// 2P(N-1)/N for P bytes: 1000 float32 on 4 processes moves 1500 floats.
	if got := ExchangedBytes(1000, 4, 4); got != 2*3*250*4 {
		t.Fatalf("got %d", got)
	}
	if ExchangedBytes(1000, 4, 1) != 0 {
		t.Fatal("one process exchanges nothing")
	}
}
