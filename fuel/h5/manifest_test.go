//go:build cgo

package h5

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/nd"
)

// manifest is the part of a fixtures fuel-h5/*.json manifest (what
// Python Fuel reads from the file) that these tests check.
type manifest struct {
	File           string              `json:"file"`
	AllSplits      []string            `json:"all_splits"`
	AllSources     []string            `json:"all_sources"`
	VlenSources    []string            `json:"vlen_sources"`
	AxisLabels     map[string][]string `json:"axis_labels"`
	SplitAttribute struct {
		Rows []struct {
			Split     string          `json:"split"`
			Source    string          `json:"source"`
			Start     int             `json:"start"`
			Stop      int             `json:"stop"`
			Indices   json.RawMessage `json:"indices"`
			Available bool            `json:"available"`
			Comment   string          `json:"comment"`
		} `json:"rows_in_file_order"`
	} `json:"split_attribute"`
	Splits       map[string]manifestSplit `json:"splits"`
	ExtraQueries []manifestQuery          `json:"extra_queries"`
}

type manifestSplit struct {
	NumExamples     int                       `json:"num_examples"`
	ProvidesSources []string                  `json:"provides_sources"`
	SourcesOrder    []string                  `json:"sources_order_returned_by_get_data"`
	SubsetRows      map[string]manifestSubset `json:"fuel_subset_rows"`
	Sources         map[string]manifestSource `json:"sources"`
}

type manifestSubset struct {
	Kind    string `json:"kind"`
	Start   int    `json:"start"`
	Stop    int    `json:"stop"`
	Indices []int  `json:"indices"`
}

type manifestSource struct {
	NumExamples   int      `json:"num_examples"`
	AxisLabels    []string `json:"axis_labels"`
	Vlen          bool     `json:"vlen"`
	DType         string   `json:"dtype"`
	BatchShape    []int    `json:"batch_shape"`
	ExampleShapes [][]int  `json:"example_shapes_first5"`
	ShapesAll     [][]int  `json:"example_shapes_all"`
	Sha256        string   `json:"sha256"`
	Sum           float64  `json:"sum_float64"`
	Min           float64  `json:"min"`
	Max           float64  `json:"max"`
	Elements      []struct {
		Example int     `json:"example"`
		Index   []int   `json:"index"`
		Value   float64 `json:"value"`
	} `json:"elements"`
}

type manifestQuery struct {
	WhichSets   []string                  `json:"which_sets"`
	Subset      json.RawMessage           `json:"subset"`
	Request     json.RawMessage           `json:"request"`
	NumExamples *int                      `json:"num_examples"`
	Provides    []string                  `json:"provides_sources"`
	SubsetRows  map[string]manifestSubset `json:"fuel_subset_rows"`
	Result      map[string]struct {
		Shape  json.RawMessage `json:"shape"`
		DType  string          `json:"dtype"`
		Sha256 string          `json:"sha256"`
	} `json:"result"`
}

func loadManifest(t *testing.T, path string) manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(m.Splits) == 0 || len(m.AllSources) == 0 {
		t.Fatalf("%s: manifest without splits or sources", path)
	}
	return m
}

// parseSlice reads {"slice": [start, stop]}.
func parseSlice(raw json.RawMessage) ([2]int, bool) {
	var s struct {
		Slice *[2]int `json:"slice"`
	}
	if json.Unmarshal(raw, &s) != nil || s.Slice == nil {
		return [2]int{}, false
	}
	return *s.Slice, true
}

// parseRequest turns a manifest request (an int, a list or a slice) into
// a fuel.Request.
func parseRequest(t *testing.T, raw json.RawMessage) fuel.Request {
	t.Helper()
	var i int
	if json.Unmarshal(raw, &i) == nil {
		return fuel.Request{Indices: []int{i}, Single: true}
	}
	var list []int
	if json.Unmarshal(raw, &list) == nil {
		return fuel.Request{Indices: list}
	}
	if s, ok := parseSlice(raw); ok {
		return fuel.Request{Start: s[0], Stop: s[1]}
	}
	t.Fatalf("unknown request %s", raw)
	return fuel.Request{}
}

// parseSubset turns a manifest subset (null, a slice or a list) into a
// *Subset.
func parseSubset(t *testing.T, raw json.RawMessage) *Subset {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if s, ok := parseSlice(raw); ok {
		return Range(s[0], s[1])
	}
	var list struct {
		List []int `json:"list"`
	}
	if json.Unmarshal(raw, &list) == nil && list.List != nil {
		return Indices(list.List...)
	}
	t.Fatalf("unknown subset %s", raw)
	return nil
}

// modes are the ways of opening a dataset that must all give Fuel's data.
var modes = []struct {
	name string
	opts Options
}{
	{"file", Options{}},
	{"file-unsorted", Options{NoSortIndices: true}},
	{"memory", Options{LoadInMemory: true}},
}

// checkSubsetRows compares the rows a dataset uses per source with the
// manifest's fuel_subset_rows.
func checkSubsetRows(t *testing.T, d *H5PYDataset, want map[string]manifestSubset) {
	t.Helper()
	for _, s := range d.srcs {
		w, ok := want[s.name]
		if !ok {
			continue
		}
		switch w.Kind {
		case "slice":
			if s.rows.isList || s.rows.start != w.Start || s.rows.stop != w.Stop {
				t.Errorf("source %s: rows %+v, Fuel uses slice [%d, %d)", s.name, s.rows, w.Start, w.Stop)
			}
		case "list":
			if !slices.Equal(s.rows.indices(), w.Indices) {
				t.Errorf("source %s: rows %v, Fuel uses %v", s.name, s.rows.indices(), w.Indices)
			}
		default:
			t.Errorf("source %s: unknown subset kind %q in manifest", s.name, w.Kind)
		}
	}
}

// checkSource compares a batch of a whole split with what the manifest
// says Fuel reads.
func checkSource(t *testing.T, name string, a *nd.Array, w manifestSource) {
	t.Helper()
	if w.Vlen {
		// Fuel gives a numpy object array of examples, each reshaped.
		if a.DType() != nd.Object || len(a.Shape) != 1 || a.Shape[0] != len(w.ShapesAll) {
			t.Fatalf("%s: %s%v, Fuel an object array of %d examples", name, a.DType(), a.Shape, len(w.ShapesAll))
		}
		for i, e := range a.Data.([]*nd.Array) {
			if e.DType().String() != w.DType || !slices.Equal(e.Shape, w.ShapesAll[i]) {
				t.Errorf("%s: example %d is %s%v, Fuel %s%v", name, i, e.DType(), e.Shape, w.DType, w.ShapesAll[i])
			}
		}
	} else {
		if a.DType().String() != w.DType {
			t.Errorf("%s: dtype %s, Fuel %s", name, a.DType(), w.DType)
		}
		if !slices.Equal(a.Shape, w.BatchShape) {
			t.Fatalf("%s: shape %v, Fuel %v", name, a.Shape, w.BatchShape)
		}
	}
	if a.Shape[0] != w.NumExamples {
		t.Errorf("%s: %d examples, Fuel %d", name, a.Shape[0], w.NumExamples)
	}
	for i, s := range w.ExampleShapes {
		if got := rowOf(a, i).Shape; !slices.Equal(got, s) {
			t.Errorf("%s: example %d has shape %v, Fuel %v", name, i, got, s)
		}
	}
	if got := sha256Hex(rawBytes(a)); got != w.Sha256 {
		t.Errorf("%s: sha256 %s, Fuel %s", name, got, w.Sha256)
	}
	if got := exactSum(a); got != w.Sum {
		t.Errorf("%s: sum %v, Fuel %v", name, got, w.Sum)
	}
	vals := values(a)
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo != w.Min || hi != w.Max {
		t.Errorf("%s: range [%v, %v], Fuel [%v, %v]", name, lo, hi, w.Min, w.Max)
	}
	for _, e := range w.Elements {
		row := rowOf(a, e.Example)
		off, err := row.Index(e.Index...)
		if err != nil {
			t.Errorf("%s: example %d %v: %v", name, e.Example, e.Index, err)
			continue
		}
		if got := row.Flat(off); got != e.Value {
			t.Errorf("%s: example %d %v = %v, Fuel %v", name, e.Example, e.Index, got, e.Value)
		}
	}
}

func TestManifests(t *testing.T) {
	checkNoOpenObjects(t)
	for _, file := range []string{"mnist-small.hdf5", "vlen.hdf5"} {
		t.Run(file, func(t *testing.T) {
			path := fuelFile(t, file)
			m := loadManifest(t, path+".json")
			testManifestSplitAttribute(t, path, m)
			for split, ms := range m.Splits {
				t.Run(split, func(t *testing.T) { testManifestSplit(t, path, m, split, ms) })
			}
			for i, q := range m.ExtraQueries {
				t.Run(fmt.Sprintf("query%d", i), func(t *testing.T) { testManifestQuery(t, path, m, q) })
			}
		})
	}
}

func testManifestSplitAttribute(t *testing.T, path string, m manifest) {
	s, err := ReadSplit(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != len(m.SplitAttribute.Rows) {
		t.Fatalf("split attribute has %d rows, Fuel %d", len(s), len(m.SplitAttribute.Rows))
	}
	for i, w := range m.SplitAttribute.Rows {
		g := s[i]
		if string(w.Indices) != "null" {
			t.Fatalf("row %d: manifest has indices %s; this test only knows null references", i, w.Indices)
		}
		if g.Split != w.Split || g.Source != w.Source || g.Start != w.Start || g.Stop != w.Stop ||
			g.IndicesPath != "" || g.Indices != nil || g.Available != w.Available || g.Comment != w.Comment {
			t.Errorf("row %d: %+v, Fuel %+v", i, g, w)
		}
	}
	if got := s.Splits(); !slices.Equal(got, m.AllSplits) {
		t.Errorf("splits %v, Fuel %v", got, m.AllSplits)
	}
	if got := s.Sources(); !slices.Equal(got, m.AllSources) {
		t.Errorf("sources %v, Fuel %v", got, m.AllSources)
	}
}

func testManifestSplit(t *testing.T, path string, m manifest, split string, ms manifestSplit) {
	sources := ms.SourcesOrder
	var first []*nd.Array
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			d, err := Open(path, []string{split}, mode.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.NumExamples() != ms.NumExamples {
				t.Errorf("NumExamples %d, Fuel %d", d.NumExamples(), ms.NumExamples)
			}
			if got := d.ProvidesSources(); !slices.Equal(got, ms.ProvidesSources) {
				t.Errorf("ProvidesSources %v, Fuel %v", got, ms.ProvidesSources)
			}
			if got := d.Sources(); !slices.Equal(got, sources) {
				t.Errorf("Sources %v, want %v", got, sources)
			}
			if got := d.VlenSources(); !slices.Equal(got, m.VlenSources) {
				t.Errorf("VlenSources %v, Fuel %v", got, m.VlenSources)
			}
			labels := d.AxisLabels()
			if len(labels) != len(m.AxisLabels) {
				t.Errorf("AxisLabels %v, Fuel %v", labels, m.AxisLabels)
			}
			for src, want := range m.AxisLabels {
				if !slices.Equal(labels[src], want) {
					t.Errorf("AxisLabels[%s] = %q, Fuel %q", src, labels[src], want)
				}
			}
			for src, ws := range ms.Sources {
				if !ws.Vlen && !slices.Equal(labels[src], ws.AxisLabels) {
					t.Errorf("AxisLabels[%s] = %q, Fuel %q", src, labels[src], ws.AxisLabels)
				}
			}
			checkSubsetRows(t, d, ms.SubsetRows)

			batch, err := d.GetData(fuel.Request{Start: 0, Stop: d.NumExamples()})
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) != len(sources) {
				t.Fatalf("%d arrays for %d sources", len(batch), len(sources))
			}
			for i, src := range sources {
				checkSource(t, src, batch[i], ms.Sources[src])
			}
			// Fuel's cross-check: one integer request per example.
			for e := 0; e < d.NumExamples(); e++ {
				ex, err := d.GetData(fuel.Request{Indices: []int{e}, Single: true})
				if err != nil {
					t.Fatal(err)
				}
				for i, src := range sources {
					if want := rowOf(batch[i], e); !nd.Equal(ex[i], want) {
						t.Fatalf("%s: example %d alone %v differs from its row in the batch", src, e, ex[i].Shape)
					}
				}
			}
			if first == nil {
				first = batch
			} else {
				for i := range batch {
					if !nd.Equal(batch[i], first[i]) {
						t.Errorf("%s: mode %s reads other data than mode %s", sources[i], mode.name, modes[0].name)
					}
				}
			}
		})
	}
}

func testManifestQuery(t *testing.T, path string, m manifest, q manifestQuery) {
	req := parseRequest(t, q.Request)
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			o := mode.opts
			o.Subset = parseSubset(t, q.Subset)
			d, err := Open(path, q.WhichSets, o)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if q.NumExamples != nil && d.NumExamples() != *q.NumExamples {
				t.Errorf("NumExamples %d, Fuel %d", d.NumExamples(), *q.NumExamples)
			}
			if q.Provides != nil && !slices.Equal(d.ProvidesSources(), q.Provides) {
				t.Errorf("ProvidesSources %v, Fuel %v", d.ProvidesSources(), q.Provides)
			}
			checkSubsetRows(t, d, q.SubsetRows)
			out, err := d.GetData(req)
			if unsortedRefused(t, o, req, err) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for i, src := range d.Sources() {
				w, ok := q.Result[src]
				if !ok {
					t.Errorf("source %s not in the manifest's result", src)
					continue
				}
				a := out[i]
				var shape []int
				var shapes [][]int
				switch {
				case json.Unmarshal(w.Shape, &shape) == nil:
					if a.DType().String() != w.DType || !slices.Equal(a.Shape, shape) {
						t.Errorf("%s: %s%v, Fuel %s%v", src, a.DType(), a.Shape, w.DType, shape)
					}
				case json.Unmarshal(w.Shape, &shapes) == nil:
					// A batch of a vlen source: one shape per example.
					if a.DType() != nd.Object || a.Shape[0] != len(shapes) {
						t.Fatalf("%s: %s%v, Fuel an object array of %d examples", src, a.DType(), a.Shape, len(shapes))
					}
					for k, e := range a.Data.([]*nd.Array) {
						if e.DType().String() != w.DType || !slices.Equal(e.Shape, shapes[k]) {
							t.Errorf("%s: example %d is %s%v, Fuel %s%v", src, k, e.DType(), e.Shape, w.DType, shapes[k])
						}
					}
				default:
					t.Fatalf("%s: shape %s", src, w.Shape)
				}
				if got := sha256Hex(rawBytes(a)); got != w.Sha256 {
					t.Errorf("%s: sha256 %s, Fuel %s", src, got, w.Sha256)
				}
				checked++
			}
			if checked == 0 {
				t.Error("no source checked")
			}
		})
	}
}
