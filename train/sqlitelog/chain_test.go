package sqlitelog

import (
	"path/filepath"
	"reflect"
	"testing"
)

// A database written by hand: c continues b, which continues a; x and y
// continue each other (a forged cycle); m continues a run logged
// elsewhere. Load and Channel follow the chain oldest first, a later run
// winning, and stop where the chain does instead of looping.
func TestChainCycleAndMissingRun(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "log.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, r := range [][3]any{
		{"a", "iterations_done", 2}, {"b", "resumed_from", "a"}, {"c", "resumed_from", "b"},
		{"x", "resumed_from", "y"}, {"y", "resumed_from", "x"}, {"m", "resumed_from", "elsewhere"},
	} {
		if _, err := d.db.Exec(`INSERT INTO status (uuid, "key", value) VALUES (?, ?, ?)`, r[0], r[1], r[2]); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range [][3]any{
		{"a", 1, 1.0}, {"a", 2, 2.0}, {"b", 2, 20.0}, {"b", 3, 30.0}, {"c", 4, 400.0},
		{"x", 1, 5.0}, {"y", 1, 6.0}, {"y", 2, 7.0}, {"m", 9, 9.0},
	} {
		if _, err := d.db.Exec(`INSERT INTO entries (uuid, time, "key", value) VALUES (?, ?, 'cost', ?)`, e[0], e[1], e[2]); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		run   string
		iters []int
		vals  []float64
	}{
		{"c", []int{1, 2, 3, 4}, []float64{1, 20, 30, 400}},
		{"x", []int{1, 2}, []float64{5, 7}},
		{"y", []int{1, 2}, []float64{6, 7}},
		{"m", []int{9}, []float64{9}},
	} {
		iters, vals, err := d.Channel(c.run, "cost")
		if err != nil || !reflect.DeepEqual(iters, c.iters) || !reflect.DeepEqual(vals, c.vals) {
			t.Errorf("Channel(%s) = %v %v %v, want %v %v", c.run, iters, vals, err, c.iters, c.vals)
		}
		l, err := d.Load(c.run)
		if err != nil {
			t.Fatalf("Load(%s): %v", c.run, err)
		}
		for k, it := range c.iters {
			r, _ := l.Row(it)
			if got, ok := r["cost"].(float64); !ok || got != c.vals[k] {
				t.Errorf("Load(%s) iteration %d: cost %v, want %g", c.run, it, r["cost"], c.vals[k])
			}
		}
	}
}
