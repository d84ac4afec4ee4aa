//go:build cgo

package h5

import (
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// readInto checks the rows and the buffer before any H5Dread writes
// through it: a buffer too small for the rows, rows beyond the dataset
// and a buffer of another dtype are errors, not writes past the end.
func TestReadIntoGuards(t *testing.T) {
	path := synthetic(t)
	d, err := Open(path, []string{"train"}, Options{Sources: []string{"features"}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := d.srcs[0]
	row := s.shape[1:]
	lock()
	defer unlock()
	for _, c := range []struct {
		out  *nd.Array
		runs []run
		want string
	}{
		{nd.New(s.dtype, append([]int{1}, row...)...), []run{{0, 3}}, "3 rows of"},
		{nd.New(s.dtype, append([]int{2}, row...)...), []run{{s.shape[0] - 1, s.shape[0] + 1}}, "outside the dataset"},
		{nd.New(nd.Float64, append([]int{1}, row...)...), []run{{0, 1}}, "into a float64 array"},
	} {
		err := s.readInto(c.out, [][]run{c.runs})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("runs %v into %v: error %v, want %q", c.runs, c.out.Shape, err, c.want)
		}
	}
	ok := nd.New(s.dtype, append([]int{2}, row...)...)
	if err := s.readInto(ok, [][]run{{{0, 2}}}); err != nil {
		t.Errorf("a good read: %v", err)
	}
}
