package starlib

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/numpyrand"
)

// Script objects in checkpoints (docs/checkpoints.md, "Script objects").
// An instance of a script class whose library base is training state (a
// Fuel dataset, scheme or transformer, an extension, a step rule, a
// monitored quantity: LibClass.State) is registered with its run when it
// is made; a checkpoint saves the instance attributes of those that exist
// when the main loop starts, in the order they were made, and resume puts
// them back into the objects that the re-run script has made again. The
// values are data (None, bools, numbers with their bits, strings, lists,
// tuples, dicts, sets, arrays, numpy RandomStates, other script objects);
// a value of a library type that the script builds (a variable, a brick,
// a stream) is kept as the re-run script made it; a function, a builtin
// or an open file cannot be saved: the first checkpoint fails naming the
// class and the attribute, unless the class leaves it out with Fuel's
// do_not_pickle_attributes. Nothing in the member is code: resume decodes
// values into the classes of the checkpoint's own script, run in the
// script's sandbox.

// objectsKey is the thread-local key of the run's object registry.
const objectsKey = "blocks.scriptObjects"

// objectRegistry lists a run's script classes and its instances that are
// training state, in the order they were made.
type objectRegistry struct {
	classes []*Class
	objects []ScriptObject
}

func registryOf(thread *starlark.Thread) *objectRegistry {
	if thread == nil {
		return nil
	}
	r, _ := thread.Local(objectsKey).(*objectRegistry)
	if r == nil {
		r = &objectRegistry{}
		thread.SetLocal(objectsKey, r)
	}
	return r
}

// savesState reports whether instances of a class with library base n are
// training state.
func savesState(n NativeBase) bool {
	s, ok := n.(interface{ SavesState() bool })
	return ok && s.SavesState()
}

// memberScriptObjects is the checkpoint's member that holds the objects
// (train/checkpoint.MemberScriptObjects), named in errors.
const memberScriptObjects = "script_objects.json"

// ScriptObjects is what a checkpoint of the run on thread saves of its
// script objects (it is a train/checkpoint.ObjectStates).
func ScriptObjects(thread *starlark.Thread) *ObjectStates {
	return &ObjectStates{reg: registryOf(thread), sealed: -1}
}

// ObjectStates are a run's script objects as a checkpoint saves and
// restores them.
type ObjectStates struct {
	reg *objectRegistry
	// sealed is the number of objects that existed when the main loop
	// started (-1: not started).
	sealed, classes int
}

// Seal fixes the objects saved and restored: those that exist when the
// main loop starts.
func (o *ObjectStates) Seal() {
	if o.sealed < 0 {
		o.sealed, o.classes = len(o.reg.objects), len(o.reg.classes)
	}
}

func (o *ObjectStates) tracked() ([]ScriptObject, []*Class) {
	if o.sealed < 0 {
		return o.reg.objects, o.reg.classes
	}
	return o.reg.objects[:o.sealed], o.reg.classes[:o.classes]
}

// savedObjects is the member script_objects.json.
type savedObjects struct {
	// Objects are the training-state objects, then the plain script
	// objects their attributes reach.
	Objects []savedObject `json:"objects"`
}

type savedObject struct {
	Class string `json:"class"`
	// ClassIndex is the class's place among the run's classes (plain
	// objects are made anew from it).
	ClassIndex int         `json:"class_index"`
	Attrs      []savedAttr `json:"attrs"`
}

type savedAttr struct {
	Name string     `json:"name"`
	V    savedValue `json:"v"`
}

// savedValue is one value: T is none, bool, int, float, str, bytes,
// list, tuple, dict (Items alternate keys and values), set, array, rng,
// obj (V: the index in Objects) or kept (a library value the re-run
// script makes: V its type).
type savedValue struct {
	T     string          `json:"t"`
	V     json.RawMessage `json:"v,omitempty"`
	Items []savedValue    `json:"items,omitempty"`
	Array *savedArray     `json:"array,omitempty"`
}

func rawJSON(x any) json.RawMessage {
	b, _ := json.Marshal(x)
	return b
}

// objectEncoder encodes the objects' attributes.
type objectEncoder struct {
	classIndex map[*Class]int
	index      map[ScriptObject]int
	out        []savedObject
	queue      []ScriptObject
	// dataOnly, when set (EncodeData), names the value encoded: a script
	// object or a library value in it is an error.
	dataOnly string
}

// CaptureObjects encodes the tracked objects' attributes.
func (o *ObjectStates) CaptureObjects() ([]byte, error) {
	objs, classes := o.tracked()
	if len(objs) == 0 {
		return nil, nil
	}
	e := &objectEncoder{classIndex: map[*Class]int{}, index: map[ScriptObject]int{}}
	for i, c := range classes {
		e.classIndex[c] = i
	}
	for _, x := range objs {
		e.add(x)
	}
	for i := 0; i < len(e.queue); i++ {
		x := e.queue[i]
		st := x.ScriptState()
		lazy := lazyAttrs(st.Class)
		for _, n := range st.names {
			if lazy[n] {
				continue
			}
			v, err := e.value(st.attrs[n], st.Class.name+"."+n)
			if err != nil {
				return nil, err
			}
			e.out[i].Attrs = append(e.out[i].Attrs, savedAttr{Name: n, V: v})
		}
	}
	return json.Marshal(savedObjects{Objects: e.out})
}

func (e *objectEncoder) add(x ScriptObject) int {
	if i, ok := e.index[x]; ok {
		return i
	}
	c := x.ScriptState().Class
	ci, ok := e.classIndex[c]
	if !ok {
		ci = -1
	}
	e.index[x] = len(e.out)
	e.out = append(e.out, savedObject{Class: c.name, ClassIndex: ci})
	e.queue = append(e.queue, x)
	return len(e.out) - 1
}

func (e *objectEncoder) value(v starlark.Value, path string) (savedValue, error) {
	items := func(vs []starlark.Value, t string) (savedValue, error) {
		out := savedValue{T: t, Items: []savedValue{}}
		for i, x := range vs {
			s, err := e.value(x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return s, err
			}
			out.Items = append(out.Items, s)
		}
		return out, nil
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return savedValue{T: "none"}, nil
	case starlark.Bool:
		return savedValue{T: "bool", V: rawJSON(bool(x))}, nil
	case starlark.Int:
		return savedValue{T: "int", V: rawJSON(x.String())}, nil
	case starlark.Float:
		return savedValue{T: "float", V: rawJSON(strconv.FormatUint(math.Float64bits(float64(x)), 16))}, nil
	case starlark.String:
		return savedValue{T: "str", V: rawJSON(string(x))}, nil
	case starlark.Bytes:
		return savedValue{T: "bytes", V: rawJSON([]byte(x))}, nil
	case *starlark.List:
		vs := make([]starlark.Value, x.Len())
		for i := range vs {
			vs[i] = x.Index(i)
		}
		return items(vs, "list")
	case starlark.Tuple:
		return items(x, "tuple")
	case *starlark.Set:
		return items(flatItems(x), "set")
	case *starlark.Dict:
		return items(flatItems(x), "dict")
	case *Array:
		a := encodeSavedArray(x.A)
		return savedValue{T: "array", Array: &a}, nil
	case *Scalar:
		a := encodeSavedArray(x.A)
		return savedValue{T: "scalar", Array: &a}, nil
	case *RandomState:
		return savedValue{T: "rng", V: rawJSON(x.R.State())}, nil
	case *starlark.Function, *starlark.Builtin, *BoundMethod:
		if e.dataOnly != "" {
			return savedValue{}, dataError(path, "a function ("+v.String()+")")
		}
		return savedValue{}, e.unsavable(path, "a function ("+v.String()+")")
	case ScriptObject:
		if st := x.ScriptState(); st != nil && e.dataOnly == "" {
			if _, plain := x.(*Instance); plain || e.isTracked(x) {
				return savedValue{T: "obj", V: rawJSON(e.add(x))}, nil
			}
		}
	}
	if e.dataOnly != "" {
		return savedValue{}, dataError(path, "a "+v.Type())
	}
	if _, ok := v.(io.Closer); ok {
		return savedValue{}, e.unsavable(path, "an open "+v.Type())
	}
	return savedValue{T: "kept", V: rawJSON(v.Type())}, nil
}

func (e *objectEncoder) isTracked(x ScriptObject) bool {
	_, ok := e.index[x]
	return ok
}

func (e *objectEncoder) unsavable(path, what string) error {
	cls, attr := path, path
	for i := range path {
		if path[i] == '.' {
			cls, attr = path[:i], path[i+1:]
			break
		}
	}
	return fmt.Errorf("the script object of class %s: attribute %s holds %s, which a checkpoint cannot save; "+
		"leave it out with do_not_pickle_attributes(%q) (fuel.utils) and make it again in the class's load()",
		cls, attr, what, leadingName(attr))
}

// leadingName is the attribute name a path starts with (cache of cache[2]).
func leadingName(path string) string {
	for i := range path {
		if path[i] == '[' || path[i] == '.' {
			return path[:i]
		}
	}
	return path
}

// lazyAttrs are the instance attributes do_not_pickle_attributes leaves
// out of checkpoints for c and its bases ("_features" for "features").
func lazyAttrs(c *Class) map[string]bool {
	m := map[string]bool{}
	for _, k := range c.mroOrSelf() {
		if k, ok := k.(*Class); ok {
			for _, n := range k.lazy {
				m["_"+n] = true
			}
		}
	}
	return m
}

// RestoreObjects checks data against the tracked objects and returns the
// function that restores them.
func (o *ObjectStates) RestoreObjects(data []byte) (func() error, error) {
	objs, classes := o.tracked()
	if len(data) == 0 {
		if len(objs) > 0 {
			return nil, fmt.Errorf("the run has %d script objects of training state (%s, ...) but the checkpoint holds none", len(objs), objs[0].ScriptState().Class.name)
		}
		return nil, nil
	}
	var s savedObjects
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", memberScriptObjects, err)
	}
	d := &objectDecoder{saved: s.Objects, objs: objs, classes: classes}
	if err := d.check(); err != nil {
		return nil, err
	}
	if err := d.run(false); err != nil {
		return nil, err
	}
	return func() error { return d.run(true) }, nil
}

type objectDecoder struct {
	saved   []savedObject
	objs    []ScriptObject
	classes []*Class
	made    map[int]ScriptObject
}

func (d *objectDecoder) check() error {
	if len(d.saved) < len(d.objs) {
		return fmt.Errorf("the run has %d script objects of training state, the checkpoint %d (the script makes different objects)", len(d.objs), len(d.saved))
	}
	for i, x := range d.objs {
		if c := x.ScriptState().Class.name; c != d.saved[i].Class {
			return fmt.Errorf("script object %d is a %s here but a %s in the checkpoint (the script makes different objects)", i, c, d.saved[i].Class)
		}
	}
	for i := len(d.objs); i < len(d.saved); i++ {
		s := d.saved[i]
		if s.ClassIndex < 0 || s.ClassIndex >= len(d.classes) || d.classes[s.ClassIndex].name != s.Class || d.classes[s.ClassIndex].native != nil {
			return fmt.Errorf("script object %d: class %s (number %d) is not a plain class of this run", i, s.Class, s.ClassIndex)
		}
	}
	return nil
}

// run decodes every object's attributes; with apply it sets them.
func (d *objectDecoder) run(apply bool) error {
	d.made = map[int]ScriptObject{}
	for i := len(d.objs); i < len(d.saved); i++ {
		d.made[i] = &Instance{st: NewObjectState(d.classes[d.saved[i].ClassIndex])}
	}
	for i, s := range d.saved {
		var x ScriptObject
		if i < len(d.objs) {
			x = d.objs[i]
		} else {
			x = d.made[i]
		}
		st := x.ScriptState()
		names := make([]string, 0, len(s.Attrs))
		values := make([]starlark.Value, 0, len(s.Attrs))
		for _, a := range s.Attrs {
			cur, _ := st.Get(a.Name)
			v, err := d.value(a.V, cur, s.Class+"."+a.Name)
			if err != nil {
				return err
			}
			names = append(names, a.Name)
			values = append(values, v)
		}
		if apply {
			st.replace(names, values)
		}
	}
	return nil
}

func (d *objectDecoder) value(s savedValue, cur starlark.Value, path string) (starlark.Value, error) {
	bad := func(err error) (starlark.Value, error) {
		return nil, fmt.Errorf("script object attribute %s: a %s value: %v", path, s.T, err)
	}
	items := func() ([]starlark.Value, error) {
		out := make([]starlark.Value, len(s.Items))
		curs := flatItems(cur)
		for i, it := range s.Items {
			var c starlark.Value
			if i < len(curs) {
				c = curs[i]
			}
			v, err := d.value(it, c, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	switch s.T {
	case "none":
		return starlark.None, nil
	case "bool":
		var b bool
		if err := json.Unmarshal(s.V, &b); err != nil {
			return bad(err)
		}
		return starlark.Bool(b), nil
	case "int":
		var t string
		if err := json.Unmarshal(s.V, &t); err != nil {
			return bad(err)
		}
		n, ok := new(big.Int).SetString(t, 10)
		if !ok {
			return bad(fmt.Errorf("%q is not an integer", t))
		}
		return starlark.MakeBigInt(n), nil
	case "float":
		var t string
		if err := json.Unmarshal(s.V, &t); err != nil {
			return bad(err)
		}
		u, err := strconv.ParseUint(t, 16, 64)
		if err != nil {
			return bad(err)
		}
		return starlark.Float(math.Float64frombits(u)), nil
	case "str":
		var t string
		if err := json.Unmarshal(s.V, &t); err != nil {
			return bad(err)
		}
		return starlark.String(t), nil
	case "bytes":
		var b []byte
		if err := json.Unmarshal(s.V, &b); err != nil {
			return bad(err)
		}
		return starlark.Bytes(b), nil
	case "list", "tuple", "set", "dict":
		vs, err := items()
		if err != nil {
			return nil, err
		}
		switch s.T {
		case "list":
			return starlark.NewList(vs), nil
		case "tuple":
			return starlark.Tuple(vs), nil
		case "set":
			set := starlark.NewSet(len(vs))
			for _, v := range vs {
				if err := set.Insert(v); err != nil {
					return bad(err)
				}
			}
			return set, nil
		}
		if len(vs)%2 != 0 {
			return bad(fmt.Errorf("odd number of items"))
		}
		dict := starlark.NewDict(len(vs) / 2)
		for i := 0; i < len(vs); i += 2 {
			if err := dict.SetKey(vs[i], vs[i+1]); err != nil {
				return bad(err)
			}
		}
		return dict, nil
	case "array", "scalar":
		if s.Array == nil {
			return bad(fmt.Errorf("no array"))
		}
		a, err := s.Array.decode()
		if err != nil {
			return bad(err)
		}
		if s.T == "array" {
			return &Array{A: a}, nil
		}
		if a.NDim() != 0 || !a.DType().IsNumeric() || a.DType() == nd.Bool {
			return bad(fmt.Errorf("not a numeric 0-d array"))
		}
		return &Scalar{A: a}, nil
	case "rng":
		var st numpyrand.State
		if err := json.Unmarshal(s.V, &st); err != nil {
			return bad(err)
		}
		if st.Pos < 0 || st.Pos > 624 {
			return bad(fmt.Errorf("position %d", st.Pos))
		}
		r := numpyrand.New(0)
		r.SetState(st)
		return &RandomState{R: r}, nil
	case "obj":
		var i int
		if err := json.Unmarshal(s.V, &i); err != nil {
			return bad(err)
		}
		switch {
		case i >= 0 && i < len(d.objs):
			return d.objs[i], nil
		case d.made[i] != nil:
			return d.made[i], nil
		}
		return bad(fmt.Errorf("no object %d", i))
	case "kept":
		var t string
		if err := json.Unmarshal(s.V, &t); err != nil {
			return bad(err)
		}
		if cur == nil || cur.Type() != t {
			got := "nothing"
			if cur != nil {
				got = "a " + cur.Type()
			}
			return nil, fmt.Errorf("script object attribute %s: held a %s at the checkpoint, which resume takes from the re-run script, but the script gives %s here (the script makes different objects)", path, t, got)
		}
		return cur, nil
	}
	return bad(fmt.Errorf("unknown kind"))
}

// flatItems are a container's items in order (a dict's keys and values
// alternating); nil for anything else.
func flatItems(v starlark.Value) []starlark.Value {
	var out []starlark.Value
	switch x := v.(type) {
	case *starlark.Dict:
		for _, kv := range x.Items() {
			out = append(out, kv[0], kv[1])
		}
	case *starlark.List, starlark.Tuple, *starlark.Set:
		it := x.(starlark.Iterable).Iterate()
		defer it.Done()
		var k starlark.Value
		for it.Next(&k) {
			out = append(out, k)
		}
	}
	return out
}

// DoNotPickleAttributes is Fuel's do_not_pickle_attributes(*names) class
// decorator (fuel.utils): each name becomes a property over the instance
// attribute "_"+name, which checkpoints leave out; reading it when it is
// not set calls the class's load() first (after a resume, or before the
// first load), and fails if load() did not set it.
func DoNotPickleAttributes() *starlark.Builtin {
	return NewBuiltin("do_not_pickle_attributes", doNotPickleAttributes)
}

func doNotPickleAttributes(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("do_not_pickle_attributes takes attribute names only, got a keyword argument %s", kwargs[0][0])
	}
	names := make([]string, len(args))
	for i, a := range args {
		s, ok := starlark.AsString(a)
		if !ok {
			return nil, fmt.Errorf("do_not_pickle_attributes: argument %d must be an attribute name, got %s", i+1, a.Type())
		}
		names[i] = s
	}
	return NewBuiltin("do_not_pickle_attributes(...)", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var cls starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &cls); err != nil {
			return nil, err
		}
		c, ok := cls.(*Class)
		if !ok || c.object {
			return nil, fmt.Errorf("do_not_pickle_attributes: decorates a class made by type(name, bases, namespace), got %s", cls.Type())
		}
		if v, _ := c.Lookup("load"); v == nil {
			return nil, fmt.Errorf("ValueError: do_not_pickle_attributes: class %s: no load method implemented", c.name)
		}
		for _, n := range names {
			if err := c.SetField(n, lazyProperty(n)); err != nil {
				return nil, err
			}
		}
		c.lazy = append(c.lazy, names...)
		return c, nil
	}), nil
}

// lazyProperty is Fuel's lazy_property_factory(name).
func lazyProperty(name string) *Property {
	get := NewBuiltin(name+".fget", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var self starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &self); err != nil {
			return nil, err
		}
		so, ok := self.(ScriptObject)
		if !ok || so.ScriptState() == nil {
			return nil, fmt.Errorf("%s: not a script object: %s", name, self.Type())
		}
		st := so.ScriptState()
		if v, ok := st.Get("_" + name); ok {
			return v, nil
		}
		load, _, err := ScriptAttr(self, st, "load")
		if err != nil {
			return nil, err
		}
		if load == nil {
			return nil, fmt.Errorf("%s.%s: the class has no load()", st.Class.name, name)
		}
		if _, err := starlark.Call(thread, load, nil, nil); err != nil {
			return nil, err
		}
		if v, ok := st.Get("_" + name); ok {
			return v, nil
		}
		return nil, fmt.Errorf("ValueError: %s wasn't loaded (%s.load() did not set self.%s)", name, st.Class.name, name)
	})
	set := NewBuiltin(name+".fset", func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var self, v starlark.Value
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &self, &v); err != nil {
			return nil, err
		}
		so, ok := self.(ScriptObject)
		if !ok || so.ScriptState() == nil {
			return nil, fmt.Errorf("%s: not a script object: %s", name, self.Type())
		}
		so.ScriptState().Set("_"+name, v)
		return starlark.None, nil
	})
	return &Property{fget: get, fset: set}
}
