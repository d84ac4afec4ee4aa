package starlib_test

import (
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

const dummyScript = `
load("fuel.utils", "do_not_pickle_attributes")
load("blocks.extensions", "SimpleExtension")

def _init(self):
    super(DummyClass, self).__init__(after_batch = True)
    getattr(self, "load")()
    self.count = 7

def _load(self):
    self.bulky_attr = list(range(100))
    self.non_picklable = lambda x: x

def _do(self, which_callback, *args):
    pass

DummyClass = do_not_pickle_attributes("non_picklable", "bulky_attr")(type("DummyClass", (SimpleExtension,), {
    "__init__": _init, "load": _load, "do": _do}))
d = DummyClass()
`

// upstream fuel: tests/test_utils.py::TestDoNotPickleAttributes::test_load
//
// TestDoNotPickleAttributesRoundTrip: a checkpoint of a script object
// leaves out the attributes do_not_pickle_attributes names (Fuel's pickle
// round trip is a checkpoint's capture and restore here); after the
// restore they are loaded again by load() when read.
func TestDoNotPickleAttributesRoundTrip(t *testing.T) {
	in, err := starlib.NewInterp(starlib.Options{FloatX: "float32", Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := in.ExecFile("dummy.star", []byte(dummyScript))
	if err != nil {
		t.Fatal(err)
	}
	objs := starlib.ScriptObjects(in.Thread)
	objs.Seal()
	data, err := objs.CaptureObjects()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); strings.Contains(s, "bulky_attr") || strings.Contains(s, "non_picklable") || !strings.Contains(s, `"count"`) {
		t.Fatalf("the saved state must hold count but not the lazy attributes: %s", s)
	}
	d := g["d"].(starlark.HasSetField)
	if err := d.SetField("count", starlark.MakeInt(0)); err != nil {
		t.Fatal(err)
	}
	restore, err := objs.RestoreObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	dict, _ := d.Attr("__dict__")
	if strings.Contains(dict.String(), "_bulky_attr") {
		t.Fatalf("after the restore the lazy attributes are unset until read, got %s", dict)
	}
	count, _ := d.Attr("count")
	bulky, err := d.Attr("bulky_attr")
	if err != nil {
		t.Fatal(err)
	}
	np, err := d.Attr("non_picklable")
	if err != nil {
		t.Fatal(err)
	}
	if count.String() != "7" || bulky.(*starlark.List).Len() != 100 || np == starlark.None {
		t.Fatalf("after the restore: count %s, bulky_attr of %s, non_picklable %s", count, bulky, np)
	}
}

// TestScriptObjectsRefuseForeignState: the member is checked against the
// run's objects and classes before anything is restored: another class,
// another number of objects, a plain object of a class the run does not
// have, or a value of another kind is refused, and the objects keep
// their attributes.
func TestScriptObjectsRefuseForeignState(t *testing.T) {
	in, err := starlib.NewInterp(starlib.Options{FloatX: "float32", Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.ExecFile("dummy.star", []byte(dummyScript)); err != nil {
		t.Fatal(err)
	}
	objs := starlib.ScriptObjects(in.Thread)
	objs.Seal()
	for _, c := range []struct{ data, want string }{
		{`{"objects":[{"class":"Other","class_index":0,"attrs":[]}]}`, "is a DummyClass here but a Other in the checkpoint"},
		{`{"objects":[]}`, "the run has 1 script objects of training state, the checkpoint 0"},
		{`{"objects":[{"class":"DummyClass","class_index":0,"attrs":[{"name":"x","v":{"t":"obj","v":1}}]},{"class":"Evil","class_index":7,"attrs":[]}]}`, "class Evil (number 7) is not a plain class of this run"},
		{`{"objects":[{"class":"DummyClass","class_index":0,"attrs":[{"name":"count","v":{"t":"code","v":"os.system"}}]}]}`, "unknown kind"},
		{`{"objects":[{"class":"DummyClass","class_index":0,"attrs":[{"name":"count","v":{"t":"kept","v":"Variable"}}]}]}`, "held a Variable at the checkpoint"},
	} {
		_, err := objs.RestoreObjects([]byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("restoring %s: got %v, want an error containing %q", c.data, err, c.want)
		}
	}
}

// TestScriptObjectScalarRoundTrip: a numpy scalar held by a script
// object (an example's label, an array's element) is saved with its dtype
// and comes back as the same numpy scalar, not as "kept" text.
func TestScriptObjectScalarRoundTrip(t *testing.T) {
	in, err := starlib.NewInterp(starlib.Options{FloatX: "float32", Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := in.ExecFile("scalars.star", []byte(`
load("numpy", "array")
load("blocks.extensions", "SimpleExtension")
def _init(self):
    super(Holder, self).__init__(after_batch = True)
    self.label = array([200, 7], dtype = "uint8")[0]
    self.weight = array([0.1], dtype = "float32")[0]
def _do(self, which_callback, *args):
    pass
Holder = type("Holder", (SimpleExtension,), {"__init__": _init, "do": _do})
h = Holder()
`))
	if err != nil {
		t.Fatal(err)
	}
	objs := starlib.ScriptObjects(in.Thread)
	objs.Seal()
	data, err := objs.CaptureObjects()
	if err != nil {
		t.Fatal(err)
	}
	h := g["h"].(starlark.HasSetField)
	for _, name := range []string{"label", "weight"} {
		if err := h.SetField(name, starlark.None); err != nil {
			t.Fatal(err)
		}
	}
	restore, err := objs.RestoreObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"label": "numpy.uint8 200", "weight": "numpy.float32 0.1"} {
		v, err := h.Attr(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Type() + " " + v.String(); got != want {
			t.Errorf("%s after the restore: %s, want %s", name, got, want)
		}
	}
}
