package starlib_test

import (
	"fmt"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// H5PYDataset.create_split_array gives, row for row, the split attribute
// h5py wrote into testdata/upstream/fuel/data/hdf5/file.hdf5 from the
// same split dict (TestH5PYDataset.setUp's; make_files.py builds the rows
// with numpy and h5py as Fuel's create_split_array does).
func TestCreateSplitArrayMatchesH5pyFile(t *testing.T) {
	in, err := starlib.NewInterp(starlib.Options{Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := in.ExecFile("split.star", []byte(`load("fuel.datasets", "H5PYDataset")
rows = H5PYDataset.create_split_array({
    "train": {"features": (0, 20, None), "targets": (0, 20)},
    "test": {"features": (20, 30), "targets": (20, 30)},
    "unlabeled": {"features": (30, 100, None, ".")},
})
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range starlark.Tuple(listValues(g["rows"].(*starlark.List))) {
		t := r.(starlark.Tuple)
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s %s", t[0].(starlark.String).GoString(), t[1].(starlark.String).GoString(), t[2], t[3], t[4], t[5], t[6].(starlark.String).GoString()))
	}
	split, err := h5.ReadSplit("testdata/upstream/fuel/data/hdf5/file.hdf5")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range split {
		idx := "None"
		if r.IndicesPath != "" {
			idx = r.IndicesPath
		}
		want = append(want, fmt.Sprintf("%s %s %d %d %s %s %s", r.Split, r.Source, r.Start, r.Stop, idx, starlark.Bool(r.Available), r.Comment))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("create_split_array:\n%s\nthe file h5py wrote:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func listValues(l *starlark.List) []starlark.Value {
	out := make([]starlark.Value, l.Len())
	for i := range out {
		out[i] = l.Index(i)
	}
	return out
}
