//go:build cgo

package h5

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// writeTestFile writes a file with every kind of source and split the
// writer knows: a 4-D uint8 image source, float32, int64 and bool sources,
// a vlen int16 source, a range split, an index-list split with a comment,
// and a split in which one source is unavailable.
func writeTestFile(t *testing.T, path string) {
	t.Helper()
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	const n = 10
	img := nd.New(nd.Uint8, n, 1, 3, 2)
	for i := range img.Data.([]uint8) {
		img.Data.([]uint8)[i] = uint8(i * 7)
	}
	f := nd.New(nd.Float32, n, 3)
	for i := range f.F32() {
		f.F32()[i] = float32(i)/4 - 2
	}
	l := nd.New(nd.Int64, n, 1)
	for i := range l.I64() {
		l.I64()[i] = int64(i*i) - 1<<40
	}
	b := nd.New(nd.Bool, n)
	for i := range b.Data.([]bool) {
		b.Data.([]bool)[i] = i%3 == 0
	}
	var seqs []*nd.Array
	for i := 0; i < n; i++ {
		s := nd.New(nd.Int16, i%4, 2)
		for j := range s.Data.([]int16) {
			s.Data.([]int16)[j] = int16(i*100 - j*37)
		}
		seqs = append(seqs, s)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddSource("features", img, []string{"batch", "channel", "height", "width"}))
	must(w.AddSource("floats", f, []string{"batch", "feature"}))
	must(w.AddSource("targets", l, []string{"batch", "index"}))
	must(w.AddSource("mask", b, nil))
	must(w.AddVlenSource("sequences", seqs, []string{"batch", "time", "feature"}))
	must(w.AddSplit(SplitDef{Name: "train", Start: 0, Stop: 6}))
	must(w.AddSplit(SplitDef{Name: "valid", Indices: []int{6, 8, 9}, Comment: "held out"}))
	must(w.AddSplit(SplitDef{Name: "test", Start: 6, Stop: 10, Sources: []string{"features", "targets"}}))
	must(w.AddSplit(SplitDef{Name: "all", Start: 0, Stop: 10}))
	must(w.SetAttribute("h5py_interface_version", "0.3"))
	must(w.SetAttribute("fuel_convert_command", "fuel-convert test"))
	must(w.Close())
}

func TestWriterRoundTrip(t *testing.T) {
	checkNoOpenObjects(t)
	path := filepath.Join(t.TempDir(), "w.hdf5")
	writeTestFile(t, path)
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	s, err := ReadSplit(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Splits(); !slices.Equal(got, []string{"all", "test", "train", "valid"}) {
		t.Errorf("splits %v", got)
	}
	if r, _ := s.Row("valid", "floats"); r.IndicesPath != "/valid_indices" || !slices.Equal(r.Indices, []int{6, 8, 9}) || r.Comment != "held out" {
		t.Errorf("valid row %+v", r)
	}
	if r, _ := s.Row("test", "floats"); r.Available || r.Comment != "." {
		t.Errorf("test/floats row %+v, want unavailable", r)
	}
	d, err := Open(path, []string{"valid"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := d.Sources(); !slices.Equal(got, []string{"features", "floats", "mask", "sequences", "targets"}) {
		t.Errorf("sources %v", got)
	}
	if got := d.AxisLabels()["sequences"]; !slices.Equal(got, []string{"batch", "time", "feature"}) {
		t.Errorf("sequences labels %q", got)
	}
	if got := d.AxisLabels()["mask"]; !slices.Equal(got, []string{""}) {
		t.Errorf("mask labels %q", got)
	}
	out, err := d.GetData(fuel.Request{Indices: []int{2, 0}})
	if err != nil {
		t.Fatal(err)
	}
	// valid is examples 6, 8, 9: the request is 9 then 6.
	if v := out[0].Data.([]uint8)[0]; v != uint8(9*6*7%256) {
		t.Errorf("features[9][0] = %d", v)
	}
	seq := out[3].Data.([]*nd.Array)
	if !slices.Equal(seq[0].Shape, []int{1, 2}) || !slices.Equal(seq[1].Shape, []int{2, 2}) || seq[1].Data.([]int16)[3] != int16(600-3*37) {
		t.Errorf("sequences %v %v", seq[0], seq[1])
	}
	if out[4].I64()[0] != 81-1<<40 {
		t.Errorf("targets %v", out[4])
	}
	if d2, err := Open(path, []string{"test"}, Options{Sources: []string{"floats"}}); err == nil || !strings.Contains(err.Error(), "not provided") {
		if d2 != nil {
			d2.Close()
		}
		t.Errorf("floats in test: %v, want not provided", err)
	}
}

func TestWriterErrors(t *testing.T) {
	checkNoOpenObjects(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddSource("x", nd.New(nd.Float32, 3, 2), []string{"batch"}); err == nil || !strings.Contains(err.Error(), "axis labels") {
		t.Errorf("bad labels: %v", err)
	}
	if err := w.AddSource("x", nd.New(nd.Float32, 3, 2), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.AddSource("x", nd.New(nd.Float32, 3, 2), nil); err == nil {
		t.Error("a source written twice")
	}
	if err := w.WriteRows("x", 2, nd.New(nd.Float32, 2, 2)); err == nil || !strings.Contains(err.Error(), "past") {
		t.Errorf("rows past the end: %v", err)
	}
	if err := w.WriteRows("x", 0, nd.New(nd.Int64, 2, 2)); err == nil || !strings.Contains(err.Error(), "holds float32") {
		t.Errorf("wrong dtype: %v", err)
	}
	if err := w.AddSplit(SplitDef{Name: "a", Indices: []int{2, 1}}); err == nil {
		t.Error("unsorted indices accepted")
	}
	if err := w.AddSplit(SplitDef{Name: "a", Start: 0, Stop: 4}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "reaches example 3") {
		t.Errorf("split past the end: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a failed Close left a file at the path")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// pyReadBack is what Debian's h5py reads from a file, computed the way
// Fuel's H5PYDataset reads it (split rows, references, dimension labels
// and scales, vlen reshaping), as JSON.
const pyReadBack = `
import hashlib, json, sys
import h5py, numpy
f = h5py.File(sys.argv[1], 'r')
out = {'split_dtype': str(f.attrs['split'].dtype), 'rows': [], 'sources': {}, 'attrs': {}}
for r in f.attrs['split']:
    ind = None
    if r['indices']:
        ds = f[r['indices']]
        ind = {'name': ds.name, 'values': ds[...].tolist()}
    out['rows'].append({'split': r['split'].decode(), 'source': r['source'].decode(), 'start': int(r['start']),
        'stop': int(r['stop']), 'indices': ind, 'available': bool(r['available']), 'comment': r['comment'].decode()})
for k, v in f.attrs.items():
    if k != 'split':
        out['attrs'][k] = [v.decode() if isinstance(v, bytes) else str(v), str(f.attrs.get_id(k).dtype)]
sources = sorted(set(r['source'] for r in out['rows']))
for s in sources:
    d = f[s]
    info = {'dtype': str(d.dtype), 'shape': list(d.shape), 'labels': [x.label for x in d.dims]}
    if 'shapes' in d.dims[0]:
        shapes = d.dims[0]['shapes']
        labels = d.dims[0]['shape_labels']
        info['labels'] = [d.dims[0].label] + [x.decode() for x in labels]
        info['dtype'] = str(h5py.check_dtype(vlen=d.dtype))
        data = [numpy.asarray(x).reshape(tuple(sh)) for x, sh in zip(d[...], shapes[...])]
        info['shapes'] = [list(x.shape) for x in data]
        info['sha256'] = hashlib.sha256(b''.join(x.tobytes() for x in data)).hexdigest()
    else:
        info['sha256'] = hashlib.sha256(d[...].tobytes()).hexdigest()
    out['sources'][s] = info
json.dump(out, sys.stdout)
`

type pyFile struct {
	SplitDType string `json:"split_dtype"`
	Rows       []struct {
		Split, Source string
		Start, Stop   int
		Indices       *struct {
			Name   string
			Values []int
		}
		Available bool
		Comment   string
	}
	Sources map[string]struct {
		DType  string
		Shape  []int
		Labels []string
		Shapes [][]int
		Sha256 string
	}
	Attrs map[string][2]string
}

// pythonH5py returns Debian's python with h5py, or skips.
func pythonH5py(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py, numpy").Run(); err != nil {
		t.Skipf("%s with h5py and numpy is needed (apt-get install python3-h5py): %v", py, err)
	}
	return py
}

func TestWriterReadByH5py(t *testing.T) {
	py := pythonH5py(t)
	path := filepath.Join(t.TempDir(), "w.hdf5")
	writeTestFile(t, path)
	cmd := exec.Command(py, "-c", pyReadBack, path)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("h5py: %v", err)
	}
	var got pyFile
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if want := "[('split', 'S5'), ('source', 'S9'), ('start', '<i8'), ('stop', '<i8'), ('indices', 'O'), ('available', '?'), ('comment', 'S8')]"; got.SplitDType != want {
		t.Errorf("split dtype in h5py\n %s\nwant (Fuel's create_split_array)\n %s", got.SplitDType, want)
	}
	split, err := ReadSplit(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(split) || len(split) != 20 {
		t.Fatalf("h5py reads %d rows, Go %d (want 20)", len(got.Rows), len(split))
	}
	for i, r := range got.Rows {
		g := split[i]
		ip := ""
		var iv []int
		if r.Indices != nil {
			ip, iv = r.Indices.Name, r.Indices.Values
		}
		if r.Split != g.Split || r.Source != g.Source || r.Start != g.Start || r.Stop != g.Stop || r.Available != g.Available ||
			r.Comment != g.Comment || ip != g.IndicesPath || !slices.Equal(iv, g.Indices) {
			t.Errorf("row %d: h5py %+v, Go %+v", i, r, g)
		}
	}
	if a := got.Attrs["h5py_interface_version"]; a != [2]string{"0.3", "|S3"} {
		t.Errorf("h5py_interface_version in h5py: %q", a)
	}
	if a := got.Attrs["fuel_convert_command"]; a[0] != "fuel-convert test" {
		t.Errorf("fuel_convert_command in h5py: %q", a)
	}
	// Every source, whole, as h5py reads it and as this package does.
	d, err := Open(path, []string{"train", "valid"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	labels := d.AxisLabels()
	for name, ps := range got.Sources {
		if !slices.Equal(ps.Labels, labels[name]) {
			t.Errorf("%s: labels h5py %q, Go %q", name, ps.Labels, labels[name])
		}
		all := readWhole(t, path, name)
		if all.DType() == nd.Object {
			var shapes [][]int
			for _, e := range all.Data.([]*nd.Array) {
				shapes = append(shapes, e.Shape)
				if e.DType().String() != ps.DType {
					t.Errorf("%s: element dtype h5py %s, Go %s", name, ps.DType, e.DType())
				}
			}
			if !slices.EqualFunc(shapes, ps.Shapes, slices.Equal) {
				t.Errorf("%s: shapes h5py %v, Go %v", name, ps.Shapes, shapes)
			}
		} else if all.DType().String() != ps.DType || !slices.Equal(all.Shape, ps.Shape) {
			t.Errorf("%s: h5py %s%v, Go %s%v", name, ps.DType, ps.Shape, all.DType(), all.Shape)
		}
		if h := sha256Hex(rawBytes(all)); h != ps.Sha256 {
			t.Errorf("%s: sha256 h5py %s, Go %s", name, ps.Sha256, h)
		}
	}
}

// readWhole reads every example of a source through the split "all".
func readWhole(t *testing.T, path, source string) *nd.Array {
	t.Helper()
	d, err := Open(path, []string{"all"}, Options{Sources: []string{source}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func TestFillAndDescribe(t *testing.T) {
	checkNoOpenObjects(t)
	path := filepath.Join(t.TempDir(), "fill.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, te := nd.New(nd.Uint8, 4, 1, 2, 2), nd.New(nd.Uint8, 2, 1, 2, 2)
	for i := range te.Data.([]uint8) {
		te.Data.([]uint8)[i] = 9
	}
	data := []SplitData{
		{Split: "train", Source: "features", Data: tr}, {Split: "train", Source: "targets", Data: nd.New(nd.Uint8, 4, 1)},
		{Split: "test", Source: "features", Data: te}, {Split: "test", Source: "targets", Data: nd.New(nd.Uint8, 2, 1), Comment: "held out"},
	}
	labels := map[string][]string{"features": {"batch", "channel", "height", "width"}, "targets": {"batch", "index"}}
	if err := w.Fill(data, labels); err != nil {
		t.Fatal(err)
	}
	w.SetAttribute("fuel_convert_version", "0.2")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Attributes["fuel_convert_version"] != "0.2" || len(info.Attributes) != 1 {
		t.Errorf("attributes %v", info.Attributes)
	}
	if len(info.Sources) != 2 || info.Sources[0].DType != "uint8" || !slices.Equal(info.Sources[0].Shape, []int{6, 1, 2, 2}) ||
		!slices.Equal(info.Sources[1].AxisLabels, []string{"batch", "index"}) {
		t.Errorf("sources %+v", info.Sources)
	}
	want := []SplitRow{
		{Split: "test", Source: "features", Start: 4, Stop: 6, Available: true, Comment: "."},
		{Split: "test", Source: "targets", Start: 4, Stop: 6, Available: true, Comment: "held out"},
		{Split: "train", Source: "features", Start: 0, Stop: 4, Available: true, Comment: "."},
		{Split: "train", Source: "targets", Start: 0, Stop: 4, Available: true, Comment: "."},
	}
	for i, r := range info.Split {
		if !reflectEqualRow(r, want[i]) {
			t.Errorf("row %d: %+v, want %+v", i, r, want[i])
		}
	}
	w2, _ := Create(filepath.Join(t.TempDir(), "bad.hdf5"))
	defer w2.Abort()
	if err := w2.Fill([]SplitData{{Split: "a", Source: "x", Data: nd.New(nd.Uint8, 2)}, {Split: "a", Source: "y", Data: nd.New(nd.Uint8, 3)}}, nil); err == nil || !strings.Contains(err.Error(), "vary in length") {
		t.Errorf("unequal lengths: %v", err)
	}
}

func reflectEqualRow(a, b SplitRow) bool {
	return a.Split == b.Split && a.Source == b.Source && a.Start == b.Start && a.Stop == b.Stop &&
		a.Available == b.Available && a.Comment == b.Comment && a.IndicesPath == b.IndicesPath
}

func TestFillVlen(t *testing.T) {
	checkNoOpenObjects(t)
	path := filepath.Join(t.TempDir(), "v.hdf5")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	ex := func(n int) *nd.Array { return nd.New(nd.Float32, n, 2) }
	err = w.Fill([]SplitData{
		{Split: "train", Source: "seq", Examples: []*nd.Array{ex(1), ex(3)}},
		{Split: "train", Source: "y", Data: nd.New(nd.Uint8, 2, 1)},
		{Split: "test", Source: "seq", Examples: []*nd.Array{ex(2)}, Comment: "c"},
		{Split: "test", Source: "y", Data: nd.New(nd.Uint8, 1, 1)},
	}, map[string][]string{"seq": {"batch", "time", "feature"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, []string{"test"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.GetData(fuel.Request{Start: 0, Stop: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e := out[0].Data.([]*nd.Array)[0]; !slices.Equal(e.Shape, []int{2, 2}) {
		t.Errorf("test seq %v", e.Shape)
	}
	if r, _ := d.Split().Row("test", "seq"); r.Start != 2 || r.Stop != 3 || r.Comment != "c" {
		t.Errorf("row %+v", r)
	}
}
