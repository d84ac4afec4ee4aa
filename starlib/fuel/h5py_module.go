package fuel

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// Module h5py: the part of h5py that Fuel's documentation uses to build a
// dataset file by hand (docs/h5py_dataset.rst), as a face over the
// project's writer of Fuel HDF5 files (fuel/h5). A File holds its
// datasets and attributes in memory and writes the whole file when it is
// flushed or closed; the file is a Fuel file, so it needs a `split`
// attribute (H5PYDataset.create_split_array's rows) by then.
//
//	File(name, mode="r")        mode "r" (read), "r+" (read and write),
//	    "a" (read and write, created when missing), "w" (create, truncate),
//	    "w-"/"x" (create, fail if it exists). Opening an existing file reads
//	    its sources, split and string attributes (a Fuel file's contents).
//	    f.create_dataset(name, shape=None, dtype=None, data=None),
//	    f[name], f[name] = data, name in f, f.keys(), f.attrs[key] (= value),
//	    f.flush(), f.close(), f.filename, f.mode
//	a dataset: ds[key] (a row, a slice, numpy indexing; ds[:] for h5py's ds[...]), ds[rows] = value
//	    (rows an int or a slice(start, stop): Starlark has no ds[...] =),
//	    ds.shape, ds.dtype, ds.name, len(ds), ds.ref, ds.dims[i].label (= ...),
//	    ds.dims.create_scale(scale, name), ds.dims[i].attach_scale(scale)
//	special_dtype(vlen=dtype)   a variable-length element type (vlen of a
//	    dtype name such as "uint8")
//	Reference()                 the null object reference
//
// What is written: every dataset as a source with its dimension labels; a
// vlen dataset with `shapes` and `shape_labels` scales attached to its
// first dimension as a variable-length Fuel source (the scales become its
// `<name>_shapes`/`<name>_shape_labels`); the split rows (a split's
// `indices` reference: the dataset it names gives its examples, and a
// dataset named `<split>_indices` is that split's index dataset); string
// attributes. String (S<n>) datasets exist only as shape_labels scales.
func h5pyModuleModules() (mods []*starlarkstruct.Module) {
	mods = append(mods, &starlarkstruct.Module{Name: "h5py", Members: starlark.StringDict{
		"File":          starlib.NewBuiltin("File", h5pyFile),
		"special_dtype": starlib.NewBuiltin("special_dtype", h5pySpecialDType),
		"Reference":     starlib.NewBuiltin("Reference", h5pyReference),
	}})
	return
}

// h5VlenType is special_dtype(vlen=dtype).
type h5VlenType struct{ dt nd.DType }

func (t *h5VlenType) String() string        { return "vlen(" + t.dt.String() + ")" }
func (t *h5VlenType) Type() string          { return "dtype" }
func (t *h5VlenType) Freeze()               {}
func (t *h5VlenType) Truth() starlark.Bool  { return true }
func (t *h5VlenType) Hash() (uint32, error) { return starlark.String(t.String()).Hash() }

func h5pySpecialDType(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var vlen starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "vlen?", &vlen); err != nil {
		return nil, err
	}
	if vlen == starlark.None {
		return nil, fmt.Errorf("special_dtype: give vlen=dtype (the element type of a variable-length dataset)")
	}
	dt, err := dtypeOf(vlen)
	if err != nil {
		return nil, fmt.Errorf("special_dtype: vlen: %v", err)
	}
	if dt == nd.Object || dt == nd.Str || dt == nd.Bool {
		return nil, fmt.Errorf("special_dtype: vlen: %s cannot be a variable-length element type", dt)
	}
	return &h5VlenType{dt: dt}, nil
}

// dtypeOf reads a dtype given by name (or a value whose str() is one).
func dtypeOf(v starlark.Value) (nd.DType, error) {
	s, ok := starlark.AsString(v)
	if !ok {
		s = v.String()
	}
	return nd.ParseDType(s)
}

// h5Ref is an object reference: the dataset it names ("" for the null
// reference), and, read from a file, that dataset's indices.
type h5Ref struct {
	name    string
	indices []int
}

func (r *h5Ref) String() string {
	if r.name == "" {
		return "<HDF5 object reference (null)>"
	}
	return "<HDF5 object reference /" + r.name + ">"
}
func (r *h5Ref) Type() string          { return "Reference" }
func (r *h5Ref) Freeze()               {}
func (r *h5Ref) Truth() starlark.Bool  { return r.name != "" }
func (r *h5Ref) Hash() (uint32, error) { return starlark.String(r.name).Hash() }

func h5pyReference(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return &h5Ref{}, nil
}

// h5File is an h5py File.
type h5File struct {
	path     string
	mode     string
	writable bool
	closed   bool
	order    []string
	sets     map[string]*h5Data
	attrs    *h5Attrs
}

func h5pyFile(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	mode := "r"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "mode?", &mode); err != nil {
		return nil, err
	}
	f := &h5File{mode: mode, sets: map[string]*h5Data{}}
	f.attrs = &h5Attrs{f: f, vals: map[string]starlark.Value{}}
	_, statErr := os.Stat(name)
	exists := statErr == nil
	load := false
	switch mode {
	case "r":
		load = true
	case "r+":
		load, f.writable = true, true
	case "a":
		load, f.writable = exists, true
	case "w":
		f.writable = true
	case "w-", "x":
		if exists {
			return nil, fmt.Errorf("File: unable to create file %s (it exists; mode %q creates a new file)", name, mode)
		}
		f.writable = true
	default:
		return nil, fmt.Errorf("File: invalid mode %q: want one of \"r\", \"r+\", \"a\", \"w\", \"w-\", \"x\"", mode)
	}
	f.path = name
	if f.writable {
		p, err := starlib.WritePath(thread, name)
		if err != nil {
			return nil, fmt.Errorf("File: %w", err)
		}
		f.path = p
	}
	if load {
		if err := starlib.CheckRead(thread, name); err != nil {
			return nil, fmt.Errorf("File: %w", err)
		}
		if err := f.load(name); err != nil {
			return nil, fmt.Errorf("File: %v", err)
		}
	}
	return f, nil
}

// load reads an existing Fuel file: its sources, split and attributes.
func (f *h5File) load(path string) error {
	info, err := h5.Describe(path)
	if err != nil {
		return err
	}
	for _, si := range info.Sources {
		a, err := h5.ReadAll(path, si.Name)
		if err != nil {
			return err
		}
		d := &h5Data{file: f, name: si.Name, attached: map[int][]*h5Data{}}
		if si.Vlen {
			d.vlen, d.shaped = true, true
			d.rows = slices.Clone(a.Data.([]*nd.Array))
			d.dtype = nd.Object
			d.shape = []int{len(d.rows)}
			d.labels = make([]string, 1)
			if len(si.AxisLabels) > 0 {
				d.labels[0] = si.AxisLabels[0]
				d.exampleLabels = slices.Clone(si.AxisLabels[1:])
			}
			if len(d.rows) > 0 {
				d.elem = d.rows[0].DType()
			}
		} else {
			d.data, d.dtype, d.shape = a, a.DType(), slices.Clone(a.Shape)
			d.labels = make([]string, len(a.Shape))
			copy(d.labels, si.AxisLabels)
		}
		f.order = append(f.order, si.Name)
		f.sets[si.Name] = d
	}
	var rows []starlark.Value
	for _, r := range info.Split {
		var ref starlark.Value = &h5Ref{}
		if r.IndicesPath != "" {
			ref = &h5Ref{name: strings.TrimPrefix(r.IndicesPath, "/"), indices: slices.Clone(r.Indices)}
		}
		rows = append(rows, starlark.Tuple{starlark.String(r.Split), starlark.String(r.Source), starlark.MakeInt(r.Start),
			starlark.MakeInt(r.Stop), ref, starlark.Bool(r.Available), starlark.String(r.Comment)})
	}
	f.attrs.set("split", starlark.NewList(rows))
	keys := make([]string, 0, len(info.Attributes))
	for k := range info.Attributes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f.attrs.set(k, starlark.String(info.Attributes[k]))
	}
	return nil
}

var (
	_ starlark.HasAttrs  = (*h5File)(nil)
	_ starlark.Mapping   = (*h5File)(nil)
	_ starlark.HasSetKey = (*h5File)(nil)
	_ starlark.Iterable  = (*h5File)(nil)
)

func (f *h5File) String() string {
	if f.closed {
		return "<Closed HDF5 file>"
	}
	return fmt.Sprintf("<HDF5 file %q (mode %s)>", f.path, f.mode)
}
func (f *h5File) Type() string          { return "File" }
func (f *h5File) Freeze()               {}
func (f *h5File) Truth() starlark.Bool  { return !starlark.Bool(f.closed) }
func (f *h5File) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: File") }
func (f *h5File) Iterate() starlark.Iterator {
	return f.keys().Iterate()
}

// keys is the list of the file's dataset names, sorted.
func (f *h5File) keys() *starlark.List {
	return starlib.StringList(slices.Sorted(slices.Values(f.order)))
}

func (f *h5File) check(write bool) error {
	if f.closed {
		return fmt.Errorf("the file %s is closed", f.path)
	}
	if write && !f.writable {
		return fmt.Errorf("the file %s is open read-only (mode %q)", f.path, f.mode)
	}
	return nil
}

func (f *h5File) AttrNames() []string {
	return []string{"attrs", "close", "create_dataset", "filename", "flush", "keys", "mode"}
}

func (f *h5File) Attr(name string) (starlark.Value, error) {
	switch name {
	case "attrs":
		return f.attrs, nil
	case "filename":
		return starlark.String(f.path), nil
	case "mode":
		if f.writable {
			return starlark.String("r+"), nil
		}
		return starlark.String("r"), nil
	case "keys":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			return f.keys(), nil
		}), nil
	case "create_dataset":
		return starlib.NewBuiltin(name, f.createDataset), nil
	case "flush", "close":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			if name == "close" && f.closed {
				return starlark.None, nil
			}
			if err := f.check(false); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if f.writable {
				if err := f.write(); err != nil {
					return nil, fmt.Errorf("%s: %v", name, err)
				}
			}
			if name == "close" {
				f.closed = true
			}
			return starlark.None, nil
		}), nil
	}
	return nil, nil
}

func (f *h5File) Get(k starlark.Value) (starlark.Value, bool, error) {
	name, ok := starlark.AsString(k)
	if !ok {
		return nil, false, fmt.Errorf("File: a dataset name must be a string, got %s", k.Type())
	}
	if err := f.check(false); err != nil {
		return nil, false, err
	}
	d, ok := f.sets[strings.TrimPrefix(name, "/")]
	if !ok {
		return nil, false, fmt.Errorf("File: KeyError: unable to open object (object %q doesn't exist)", name)
	}
	return d, true, nil
}

// SetKey is f[name] = data: a new dataset holding data.
func (f *h5File) SetKey(k, v starlark.Value) error {
	name, ok := starlark.AsString(k)
	if !ok {
		return fmt.Errorf("File: a dataset name must be a string, got %s", k.Type())
	}
	_, err := f.newDataset(name, starlark.None, starlark.None, v)
	return err
}

func (f *h5File) createDataset(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var shape, dtype, data starlark.Value = starlark.None, starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "shape?", &shape, "dtype?", &dtype, "data?", &data); err != nil {
		return nil, err
	}
	d, err := f.newDataset(name, shape, dtype, data)
	if err != nil {
		return nil, fmt.Errorf("create_dataset: %v", err)
	}
	return d, nil
}

// newDataset makes a dataset from a shape and a dtype, or from data.
func (f *h5File) newDataset(name string, shape, dtype, data starlark.Value) (*h5Data, error) {
	if err := f.check(true); err != nil {
		return nil, err
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("dataset name %q: only datasets in the root group are supported (Fuel's sources)", name)
	}
	if _, ok := f.sets[name]; ok {
		return nil, fmt.Errorf("unable to create dataset %q (name already exists)", name)
	}
	d := &h5Data{file: f, name: name, attached: map[int][]*h5Data{}}
	var sh []int
	if shape != starlark.None {
		var err error
		if n, ok := shape.(starlark.Int); ok {
			i, _ := n.Int64()
			sh = []int{int(i)}
		} else if sh, err = starlib.AsInts(shape); err != nil {
			return nil, fmt.Errorf("dataset %q: shape must be a tuple of ints, got %s", name, shape)
		}
		for _, n := range sh {
			if n < 0 || n > 1<<31 {
				return nil, fmt.Errorf("dataset %q: bad shape %v", name, sh)
			}
		}
		if n, ok := nd.ProdChecked(sh); !ok || n > 1<<31 {
			return nil, fmt.Errorf("dataset %q: shape %v is too large", name, sh)
		}
	}
	switch t := dtype.(type) {
	case *h5VlenType:
		if len(sh) != 1 {
			return nil, fmt.Errorf("dataset %q: a variable-length dataset is 1-D (one example a row), got shape %v", name, sh)
		}
		d.vlen, d.elem, d.dtype, d.shape = true, t.dt, nd.Object, sh
		d.rows = make([]*nd.Array, sh[0])
		for i := range d.rows {
			d.rows[i] = nd.New(t.dt, 0)
		}
		d.labels = make([]string, 1)
	default:
		if s, ok := starlark.AsString(dtype); ok && (strings.HasPrefix(s, "S") || strings.HasPrefix(s, "|S")) {
			n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(s, "|"), "S"))
			if err != nil || n < 1 || len(sh) != 1 {
				return nil, fmt.Errorf("dataset %q: a string dataset is S<length> with a 1-D shape, got %s and %v", name, s, sh)
			}
			d.str, d.strLen, d.dtype, d.shape = true, n, nd.Str, sh
			d.strs = make([]string, sh[0])
			d.labels = make([]string, 1)
			break
		}
		if data != starlark.None {
			var want *nd.DType
			if dtype != starlark.None {
				dt, err := dtypeOf(dtype)
				if err != nil {
					return nil, fmt.Errorf("dataset %q: dtype: %v", name, err)
				}
				want = &dt
			}
			a, err := starlib.ToArray(data, want)
			if err != nil {
				return nil, fmt.Errorf("dataset %q: data: %v", name, err)
			}
			if a.DType() == nd.Object || a.DType() == nd.Str {
				return nil, fmt.Errorf("dataset %q: data of dtype %s: give a numeric array (a variable-length dataset is made with special_dtype(vlen=...))", name, a.DType())
			}
			if a.NDim() == 0 {
				return nil, fmt.Errorf("dataset %q: a scalar dataset is not a Fuel source (it needs an example axis)", name)
			}
			if sh != nil && !nd.SameShape(sh, a.Shape) {
				return nil, fmt.Errorf("dataset %q: shape %v does not match the data's %v", name, sh, a.Shape)
			}
			d.data = a.Copy()
		} else {
			if sh == nil {
				return nil, fmt.Errorf("dataset %q: give a shape or data", name)
			}
			if len(sh) == 0 {
				return nil, fmt.Errorf("dataset %q: a scalar dataset is not a Fuel source (it needs an example axis)", name)
			}
			dt := nd.Float32 // h5py's default, 'f4'
			if dtype != starlark.None {
				var err error
				if dt, err = dtypeOf(dtype); err != nil {
					return nil, fmt.Errorf("dataset %q: dtype: %v", name, err)
				}
			}
			if dt == nd.Object || dt == nd.Str {
				return nil, fmt.Errorf("dataset %q: dtype %s: use special_dtype(vlen=...) or S<length>", name, dt)
			}
			d.data = nd.New(dt, sh...)
		}
		d.dtype, d.shape = d.data.DType(), slices.Clone(d.data.Shape)
		d.labels = make([]string, len(d.shape))
	}
	f.sets[name] = d
	f.order = append(f.order, name)
	return d, nil
}

// h5Data is an h5py Dataset.
type h5Data struct {
	file  *h5File
	name  string
	dtype nd.DType
	shape []int
	data  *nd.Array // a regular dataset's rows
	// A variable-length dataset: one array a row, flat as assigned, or
	// shaped (read from a file, with its example axes' labels).
	vlen          bool
	elem          nd.DType
	rows          []*nd.Array
	shaped        bool
	exampleLabels []string
	// A string dataset (S<strLen>).
	str    bool
	strLen int
	strs   []string

	labels    []string          // one a dimension
	scaleName string            // set by dims.create_scale
	attached  map[int][]*h5Data // dimension -> scales
}

var (
	_ starlark.HasAttrs  = (*h5Data)(nil)
	_ starlark.Mapping   = (*h5Data)(nil)
	_ starlark.HasSetKey = (*h5Data)(nil)
	_ starlark.Sequence  = (*h5Data)(nil)
	_ starlark.Sliceable = (*h5Data)(nil)
)

func (d *h5Data) String() string {
	return fmt.Sprintf("<HDF5 dataset %q: shape %s, type %q>", d.name, nd.ShapeString(d.shape), d.dtypeName())
}
func (d *h5Data) Type() string          { return "Dataset" }
func (d *h5Data) Freeze()               {}
func (d *h5Data) Truth() starlark.Bool  { return true }
func (d *h5Data) Hash() (uint32, error) { return starlark.String(d.name).Hash() }
func (d *h5Data) Len() int              { return d.shape[0] }
func (d *h5Data) Iterate() starlark.Iterator {
	vs := make([]starlark.Value, d.shape[0])
	for i := range vs {
		vs[i], _, _ = d.Get(starlark.MakeInt(i))
	}
	return starlark.NewList(vs).Iterate()
}

// Index is row i (what ds[i] gives).
func (d *h5Data) Index(i int) starlark.Value {
	v, _, err := d.Get(starlark.MakeInt(i))
	if err != nil {
		return starlark.None
	}
	return v
}

// Slice is ds[a:b:c], ds[:] (h5py's ds[...], which Starlark cannot
// write): the rows, as ds[slice(a, b)] gives them (a list of arrays for a
// variable-length dataset, of bytes for a string one, else an array).
// Like iteration, it reads what the dataset holds in memory.
func (d *h5Data) Slice(start, end, step int) starlark.Value {
	if !d.str && !d.vlen {
		return (&starlib.Array{A: d.data.Copy()}).Slice(start, end, step)
	}
	var out []starlark.Value
	for i := start; (step > 0 && i < end) || (step < 0 && i > end); i += step {
		if d.str {
			out = append(out, starlark.Bytes(d.strs[i]))
		} else {
			out = append(out, starlib.FromArray(flatRow(d.rows[i])))
		}
	}
	return starlark.NewList(out)
}

func (d *h5Data) dtypeName() string {
	if d.str {
		return "|S" + strconv.Itoa(d.strLen)
	}
	return d.dtype.String()
}

func (d *h5Data) AttrNames() []string { return []string{"dims", "dtype", "name", "ref", "shape"} }

func (d *h5Data) Attr(name string) (starlark.Value, error) {
	switch name {
	case "shape":
		t := make(starlark.Tuple, len(d.shape))
		for i, n := range d.shape {
			t[i] = starlark.MakeInt(n)
		}
		return t, nil
	case "dtype":
		return starlark.String(d.dtypeName()), nil
	case "name":
		return starlark.String("/" + d.name), nil
	case "ref":
		return &h5Ref{name: d.name}, nil
	case "dims":
		return &h5Dims{d: d}, nil
	}
	return nil, nil
}

// Get is ds[key]: numpy's indexing of the dataset's rows.
func (d *h5Data) Get(k starlark.Value) (starlark.Value, bool, error) {
	if err := d.file.check(false); err != nil {
		return nil, false, err
	}
	switch {
	case d.str:
		l := make([]starlark.Value, len(d.strs))
		for i, s := range d.strs {
			l[i] = starlark.Bytes(s)
		}
		return h5IndexRows(l, k)
	case d.vlen:
		l := make([]starlark.Value, len(d.rows))
		for i, r := range d.rows {
			l[i] = starlib.FromArray(flatRow(r))
		}
		if sl, ok := k.(*starlib.SliceValue); ok {
			a, z, err := rowRange(sl, len(l))
			if err != nil {
				return nil, false, err
			}
			return starlark.NewList(l[a:z]), true, nil
		}
		return h5IndexRows(l, k)
	}
	return (&starlib.Array{A: d.data.Copy()}).Get(k)
}

// flatRow is a copy of a variable-length dataset's row as h5py reads it:
// flat (the row's shape is Fuel's, in the <name>_shapes scale, which
// H5PYDataset applies and h5py does not).
func flatRow(r *nd.Array) *nd.Array {
	c := r.Copy()
	c.Shape = []int{c.Size()}
	return c
}

// h5IndexRows is l[k] for an int k, or l[start:stop] for a slice.
func h5IndexRows(l []starlark.Value, k starlark.Value) (starlark.Value, bool, error) {
	if sl, ok := k.(*starlib.SliceValue); ok {
		a, z, err := rowRange(sl, len(l))
		if err != nil {
			return nil, false, err
		}
		return starlark.NewList(l[a:z]), true, nil
	}
	var i int
	if err := starlark.AsInt(k, &i); err != nil {
		return nil, false, fmt.Errorf("index must be an int or a slice, got %s", k.Type())
	}
	if i < 0 {
		i += len(l)
	}
	if i < 0 || i >= len(l) {
		return nil, false, fmt.Errorf("index %s is out of range for %d rows", k, len(l))
	}
	return l[i], true, nil
}

// rowRange reads a slice of step 1 (or None) over n rows.
func rowRange(sl *starlib.SliceValue, n int) (int, int, error) {
	if sl.Step != starlark.None {
		var st int
		if err := starlark.AsInt(sl.Step, &st); err != nil || st != 1 {
			return 0, 0, fmt.Errorf("only slices of step 1 select rows to write, got %s", sl)
		}
	}
	a, z := 0, n
	for i, v := range []starlark.Value{sl.Start, sl.Stop} {
		if v == starlark.None {
			continue
		}
		var x int
		if err := starlark.AsInt(v, &x); err != nil {
			return 0, 0, fmt.Errorf("slice bounds must be ints, got %s", v.Type())
		}
		if x < 0 {
			x += n
		}
		x = max(0, min(x, n))
		if i == 0 {
			a = x
		} else {
			z = x
		}
	}
	return a, max(a, z), nil
}

// SetKey is ds[rows] = value, rows an int or a slice of step 1.
func (d *h5Data) SetKey(k, v starlark.Value) error {
	if err := d.file.check(true); err != nil {
		return err
	}
	n := d.shape[0]
	var a, z int
	single := false
	switch k := k.(type) {
	case *starlib.SliceValue:
		var err error
		if a, z, err = rowRange(k, n); err != nil {
			return fmt.Errorf("dataset %q: %v", d.name, err)
		}
	case starlark.Int:
		var i int
		if err := starlark.AsInt(k, &i); err != nil {
			return err
		}
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return fmt.Errorf("dataset %q: index %s is out of range for %d rows", d.name, k, n)
		}
		a, z, single = i, i+1, true
	default:
		return fmt.Errorf("dataset %q: write rows with an int or a slice(start, stop), got %s", d.name, k.Type())
	}
	switch {
	case d.str:
		vals, err := d.rowValues(v, single, z-a, "values")
		if err != nil {
			return err
		}
		for i, x := range vals {
			s, ok := starlark.AsString(x)
			if b, isBytes := x.(starlark.Bytes); isBytes {
				s, ok = string(b), true
			}
			if !ok {
				return fmt.Errorf("dataset %q: want bytes or strings, got %s", d.name, x.Type())
			}
			if len(s) > d.strLen {
				s = s[:d.strLen] // h5py truncates to the fixed length
			}
			d.strs[a+i] = s
		}
	case d.vlen:
		vals, err := d.rowValues(v, single, z-a, "examples")
		if err != nil {
			return err
		}
		for i, x := range vals {
			dt := d.elem
			arr, err := starlib.ToArray(x, &dt)
			if err != nil {
				return fmt.Errorf("dataset %q: row %d: %v", d.name, a+i, err)
			}
			if arr.NDim() != 1 {
				return fmt.Errorf("dataset %q: row %d: a variable-length row is 1-D (flatten the example), got shape %v", d.name, a+i, arr.Shape)
			}
			d.rows[a+i] = arr.Copy()
		}
		d.shaped = false
	default:
		dt := d.dtype
		arr, err := starlib.ToArray(v, &dt)
		if err != nil {
			return fmt.Errorf("dataset %q: %v", d.name, err)
		}
		dst := d.data.Slice(a, z)
		if single {
			dst = &nd.Array{Shape: d.shape[1:], Data: dst.Data}
		}
		if !nd.SameShape(dst.Shape, arr.Shape) {
			return fmt.Errorf("dataset %q: can't broadcast %v into rows of shape %v", d.name, arr.Shape, dst.Shape)
		}
		if err := dst.CopyFrom(arr); err != nil {
			return fmt.Errorf("dataset %q: %v", d.name, err)
		}
	}
	return nil
}

// rowValues is what a write of n rows assigns, one value a row (v itself
// for a single row); noun ("values", "examples") names them in errors.
func (d *h5Data) rowValues(v starlark.Value, single bool, n int, noun string) ([]starlark.Value, error) {
	vals := []starlark.Value{v}
	if !single {
		var err error
		if vals, err = valuesOf(v); err != nil {
			return nil, fmt.Errorf("dataset %q: %v", d.name, err)
		}
	}
	if len(vals) != n {
		return nil, fmt.Errorf("dataset %q: %d %s for %d rows", d.name, len(vals), noun, n)
	}
	return vals, nil
}

func valuesOf(v starlark.Value) ([]starlark.Value, error) {
	if a, ok := v.(*starlib.Array); ok && a.A.NDim() > 0 {
		var out []starlark.Value
		it := a.Iterate()
		defer it.Done()
		var x starlark.Value
		for it.Next(&x) {
			out = append(out, x)
		}
		return out, nil
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("want a list of values for the rows, got %s", v.Type())
	}
	var out []starlark.Value
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		out = append(out, x)
	}
	return out, nil
}

// h5Dims is ds.dims.
type h5Dims struct{ d *h5Data }

var (
	_ starlark.Indexable = (*h5Dims)(nil)
	_ starlark.HasAttrs  = (*h5Dims)(nil)
)

func (m *h5Dims) String() string        { return fmt.Sprintf("<Dimensions of HDF5 object %q>", m.d.name) }
func (m *h5Dims) Type() string          { return "DimensionManager" }
func (m *h5Dims) Freeze()               {}
func (m *h5Dims) Truth() starlark.Bool  { return true }
func (m *h5Dims) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: DimensionManager") }
func (m *h5Dims) Len() int              { return len(m.d.shape) }
func (m *h5Dims) Index(i int) starlark.Value {
	return &h5Dim{d: m.d, i: i}
}
func (m *h5Dims) AttrNames() []string { return []string{"create_scale"} }
func (m *h5Dims) Attr(name string) (starlark.Value, error) {
	if name != "create_scale" {
		return nil, nil
	}
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var scale *h5Data
		var sname string
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dset", &scale, "name?", &sname); err != nil {
			return nil, err
		}
		if err := scale.file.check(true); err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		scale.scaleName = sname
		return starlark.None, nil
	}), nil
}

// h5Dim is ds.dims[i].
type h5Dim struct {
	d *h5Data
	i int
}

var _ starlark.HasSetField = (*h5Dim)(nil)

func (x *h5Dim) String() string {
	return fmt.Sprintf("<%q dimension %d of HDF5 dataset %q>", x.d.labels[x.i], x.i, x.d.name)
}
func (x *h5Dim) Type() string          { return "DimensionProxy" }
func (x *h5Dim) Freeze()               {}
func (x *h5Dim) Truth() starlark.Bool  { return true }
func (x *h5Dim) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: DimensionProxy") }
func (x *h5Dim) AttrNames() []string   { return []string{"attach_scale", "label"} }
func (x *h5Dim) Attr(name string) (starlark.Value, error) {
	switch name {
	case "label":
		return starlark.String(x.d.labels[x.i]), nil
	case "attach_scale":
		return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var scale *h5Data
			if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dscale", &scale); err != nil {
				return nil, err
			}
			if err := x.d.file.check(true); err != nil {
				return nil, fmt.Errorf("%s: %v", b.Name(), err)
			}
			if scale.file != x.d.file {
				return nil, fmt.Errorf("%s: the scale is in another file", b.Name())
			}
			if scale.scaleName == "" {
				return nil, fmt.Errorf("%s: %s is not a dimension scale (make it one with dims.create_scale(dset, name))", b.Name(), scale.name)
			}
			x.d.attached[x.i] = append(x.d.attached[x.i], scale)
			return starlark.None, nil
		}), nil
	}
	return nil, nil
}

func (x *h5Dim) SetField(name string, v starlark.Value) error {
	if name != "label" {
		return starlark.NoSuchAttrError(fmt.Sprintf("DimensionProxy has no .%s field to set", name))
	}
	if err := x.d.file.check(true); err != nil {
		return err
	}
	s, ok := starlark.AsString(v)
	if !ok {
		return fmt.Errorf("a dimension label is a string, got %s", v.Type())
	}
	x.d.labels[x.i] = s
	return nil
}

// h5Attrs is f.attrs: the root group's attributes.
type h5Attrs struct {
	f    *h5File
	keys []string
	vals map[string]starlark.Value
}

var (
	_ starlark.Mapping   = (*h5Attrs)(nil)
	_ starlark.HasSetKey = (*h5Attrs)(nil)
	_ starlark.HasAttrs  = (*h5Attrs)(nil)
)

func (a *h5Attrs) String() string        { return "<Attributes of HDF5 object>" }
func (a *h5Attrs) Type() string          { return "AttributeManager" }
func (a *h5Attrs) Freeze()               {}
func (a *h5Attrs) Truth() starlark.Bool  { return len(a.keys) > 0 }
func (a *h5Attrs) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: AttributeManager") }
func (a *h5Attrs) AttrNames() []string   { return []string{"keys"} }
func (a *h5Attrs) Attr(name string) (starlark.Value, error) {
	if name != "keys" {
		return nil, nil
	}
	return starlib.NewBuiltin(name, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
			return nil, err
		}
		return starlib.StringList(a.keys), nil
	}), nil
}

func (a *h5Attrs) set(k string, v starlark.Value) {
	if _, ok := a.vals[k]; !ok {
		a.keys = append(a.keys, k)
	}
	a.vals[k] = v
}

func (a *h5Attrs) Get(k starlark.Value) (starlark.Value, bool, error) {
	s, ok := starlark.AsString(k)
	if !ok {
		return nil, false, fmt.Errorf("attrs: a name must be a string, got %s", k.Type())
	}
	if err := a.f.check(false); err != nil {
		return nil, false, err
	}
	v, ok := a.vals[s]
	if !ok {
		return nil, false, fmt.Errorf("attrs: KeyError: can't open attribute (%q doesn't exist)", s)
	}
	return v, true, nil
}

// SetKey is f.attrs[key] = value: "split" takes create_split_array's rows;
// any other attribute a string (or bytes).
func (a *h5Attrs) SetKey(k, v starlark.Value) error {
	s, ok := starlark.AsString(k)
	if !ok {
		return fmt.Errorf("attrs: a name must be a string, got %s", k.Type())
	}
	if err := a.f.check(true); err != nil {
		return err
	}
	if s == "split" {
		if _, err := splitDefs(a.f, v); err != nil {
			return fmt.Errorf("attrs[\"split\"]: %v", err)
		}
		a.set(s, v)
		return nil
	}
	switch v := v.(type) {
	case starlark.String:
		a.set(s, v)
	case starlark.Bytes:
		a.set(s, starlark.String(v))
	default:
		return fmt.Errorf("attrs[%q]: only string attributes are written (and the split), got %s", s, v.Type())
	}
	return nil
}

// splitDefs reads the split attribute's rows (split, source, start,
// stop, indices, available, comment) into the writer's splits, and names
// the datasets that are splits' index datasets.
func splitDefs(f *h5File, v starlark.Value) ([]h5.SplitDef, error) {
	rows, err := valuesOf(v)
	if err != nil {
		return nil, err
	}
	var defs []h5.SplitDef
	at := map[string]int{}
	hasIdx := map[string]bool{}
	for k, r := range rows {
		t, ok := r.(starlark.Tuple)
		if !ok || len(t) != 7 {
			return nil, fmt.Errorf("row %d: want a tuple (split, source, start, stop, indices, available, comment) as create_split_array gives, got %s", k, r)
		}
		split, ok1 := starlark.AsString(t[0])
		source, ok2 := starlark.AsString(t[1])
		comment, ok3 := starlark.AsString(t[6])
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("row %d: split, source and comment must be strings", k)
		}
		var start, stop int
		if err := starlark.AsInt(t[2], &start); err != nil {
			return nil, fmt.Errorf("row %d: start: %v", k, err)
		}
		if err := starlark.AsInt(t[3], &stop); err != nil {
			return nil, fmt.Errorf("row %d: stop: %v", k, err)
		}
		i, ok := at[split]
		if !ok {
			i = len(defs)
			at[split] = i
			defs = append(defs, h5.SplitDef{Name: split, Ranges: map[string][2]int{}, Comments: map[string]string{}})
		}
		if !bool(t[5].Truth()) {
			continue
		}
		d := &defs[i]
		if comment != "." && comment != "" {
			d.Comments[source] = comment
		}
		ref, _ := t[4].(*h5Ref)
		if ref == nil && t[4] != starlark.None {
			return nil, fmt.Errorf("row %d: indices must be a Reference or None, got %s", k, t[4].Type())
		}
		if ref == nil || ref.name == "" {
			if hasIdx[split] {
				return nil, fmt.Errorf("split %q: some sources have indices, %q has a range: the project's files give a split one index list", split, source)
			}
			d.Ranges[source] = [2]int{start, stop}
			continue
		}
		idx := ref.indices
		if ds, ok := f.sets[ref.name]; ok {
			if ds.vlen || ds.str || ds.data.NDim() != 1 {
				return nil, fmt.Errorf("split %q: the indices dataset %q must be a 1-D array of ints", split, ref.name)
			}
			if dt := ds.data.DType(); !dt.IsNumeric() || dt.IsFloat() || dt == nd.Bool {
				return nil, fmt.Errorf("split %q: the indices dataset %q must hold ints, got %s", split, ref.name, dt)
			}
			idx = make([]int, ds.data.Size())
			for j := range idx {
				idx[j] = int(ds.data.Flat(j))
			}
		} else if idx == nil {
			return nil, fmt.Errorf("split %q: the reference names %q, which is not in the file", split, ref.name)
		}
		if len(d.Ranges) > 0 {
			return nil, fmt.Errorf("split %q: some sources have ranges, %q has indices: the project's files give a split one index list", split, source)
		}
		if hasIdx[split] && !slices.Equal(d.Indices, idx) {
			return nil, fmt.Errorf("split %q: its sources reference different indices: the project's files give a split one index list", split)
		}
		hasIdx[split] = true
		d.Indices = slices.Clone(idx)
		d.Sources = append(d.Sources, source)
	}
	for i := range defs {
		if hasIdx[defs[i].Name] {
			defs[i].Ranges = nil
		}
	}
	return defs, nil
}

// write writes the whole file through the project's writer.
func (f *h5File) write() error {
	sv, ok := f.attrs.vals["split"]
	if !ok {
		return fmt.Errorf("%s: a Fuel file needs its split attribute: f.attrs[\"split\"] = H5PYDataset.create_split_array(split_dict)", f.path)
	}
	defs, err := splitDefs(f, sv)
	if err != nil {
		return fmt.Errorf("%s: the split attribute: %v", f.path, err)
	}
	// The datasets the writer makes itself: the vlen sources' scales and
	// the splits' index datasets.
	consumed := map[string]bool{}
	for _, d := range defs {
		if d.Indices != nil {
			consumed[d.Name+"_indices"] = true
		}
	}
	for _, name := range f.order {
		d := f.sets[name]
		if d.vlen && !d.shaped {
			for _, s := range d.attached[0] {
				if s.scaleName == "shapes" || s.scaleName == "shape_labels" {
					consumed[s.name] = true
				}
			}
		}
	}
	w, err := h5.Create(f.path)
	if err != nil {
		return err
	}
	for _, name := range f.order {
		if consumed[name] {
			continue
		}
		d := f.sets[name]
		switch {
		case d.str:
			err = fmt.Errorf("dataset %q: a string dataset is written only as a variable-length source's shape_labels scale", name)
		case d.vlen:
			var ex []*nd.Array
			var labels []string
			if ex, labels, err = d.examples(); err == nil {
				err = w.AddVlenSource(name, ex, labels)
			}
		default:
			var labels []string
			if slices.ContainsFunc(d.labels, func(s string) bool { return s != "" }) {
				labels = d.labels
			}
			err = w.AddSource(name, d.data, labels)
		}
		if err != nil {
			w.Abort()
			return err
		}
	}
	for _, d := range defs {
		if err := w.AddSplit(d); err != nil {
			w.Abort()
			return err
		}
	}
	for _, k := range f.attrs.keys {
		if k == "split" {
			continue
		}
		s, _ := starlark.AsString(f.attrs.vals[k])
		if err := w.SetAttribute(k, s); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// examples are a vlen dataset's rows shaped by its shapes scale, and its
// labels: the first dimension's, then the shape_labels scale's.
func (d *h5Data) examples() ([]*nd.Array, []string, error) {
	if d.shaped {
		return d.rows, append([]string{d.labels[0]}, d.exampleLabels...), nil
	}
	var shapes, labels *h5Data
	for _, s := range d.attached[0] {
		switch s.scaleName {
		case "shapes":
			shapes = s
		case "shape_labels":
			labels = s
		}
	}
	if shapes == nil || labels == nil {
		return nil, nil, fmt.Errorf("dataset %q: a variable-length source needs the dimension scales \"shapes\" and \"shape_labels\" attached to its first dimension", d.name)
	}
	if shapes.vlen || shapes.str || shapes.data.NDim() != 2 || shapes.data.Shape[0] != len(d.rows) {
		return nil, nil, fmt.Errorf("dataset %q: its shapes scale %q must be an int array of shape (%d, example axes)", d.name, shapes.name, len(d.rows))
	}
	if !labels.str || len(labels.strs) != shapes.data.Shape[1] {
		return nil, nil, fmt.Errorf("dataset %q: its shape_labels scale %q must hold %d strings", d.name, labels.name, shapes.data.Shape[1])
	}
	k := shapes.data.Shape[1]
	out := make([]*nd.Array, len(d.rows))
	for i, r := range d.rows {
		sh := make([]int, k)
		for j := range sh {
			sh[j] = int(shapes.data.Flat(i*k + j))
		}
		a, err := r.Reshape(sh...)
		if err != nil {
			return nil, nil, fmt.Errorf("dataset %q: row %d holds %d elements, its shape %v: %v", d.name, i, r.Size(), sh, err)
		}
		out[i] = a
	}
	return out, append([]string{d.labels[0]}, labels.strs...), nil
}
