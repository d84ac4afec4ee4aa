package starlib_test

import (
	"context"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/fuel/server"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
)

// TestServerDataStreamScript reads a stream served from Go in a script:
// the attributes Fuel gives, the batches as the script's own stream gives
// them, epoch after epoch.
func TestServerDataStreamScript(t *testing.T) {
	t.Setenv("FUEL_FLOATX", "float32")
	g, err := starlib.ExecFile("serve.star", []byte(`
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme")
load("numpy", "arange")
ds = IndexableDataset({"x": arange(30).reshape(15, 2), "y": arange(15)})
stream = DataStream(ds, iteration_scheme = ShuffledScheme(15, 4))
`), starlib.Options{Library: all.Library()})
	if err != nil {
		t.Fatal(starlib.Backtrace(err))
	}
	srv, err := server.Listen(g["stream"].(*starfuel.Stream).S, server.Options{Port: -1, HWM: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx)
	_, err = starlib.ExecFile("client.star", []byte(`
load("assert", "assert")
load("fuel.streams", "ServerDataStream", "DataStream")
load("fuel.datasets", "IndexableDataset")
load("fuel.schemes", "ShuffledScheme")
load("numpy", "arange")
s = ServerDataStream(("x", "y"), False, port = PORT, hwm = 2, axis_labels = {"x": ("batch", "feature")}, timeout = 20)
assert.eq(s.sources, ("x", "y"))
assert.eq(s.produces_examples, False)
assert.eq(s.axis_labels, {"x": ("batch", "feature")})
local = DataStream(IndexableDataset({"x": arange(30).reshape(15, 2), "y": arange(15)}), iteration_scheme = ShuffledScheme(15, 4))
for epoch in range(3):
    got = [(x.tolist(), y.tolist()) for x, y in s.get_epoch_iterator()]
    want = [(x.tolist(), y.tolist()) for x, y in local.get_epoch_iterator()]
    assert.eq(len(got), 4)
    assert.eq(got, want)
`), starlib.Options{Modules: map[string]*starlarkstruct.Module{"assert": assertModule}, Predeclared: starlark.StringDict{"PORT": starlark.MakeInt(srv.Port())}, Library: all.Library()})
	if err != nil {
		t.Fatal(starlib.Backtrace(err))
	}
}

func TestServerDataStreamArgumentErrors(t *testing.T) {
	for src, want := range map[string]string{
		`ServerDataStream(("x",), False, port = 0)`:            "port must be in 1..65535, got 0",
		`ServerDataStream(("x",), False, hwm = -1)`:            "hwm must be positive, got -1",
		`ServerDataStream(("x",), False, timeout = 0)`:         "timeout must be a positive number of seconds or None, got 0",
		`ServerDataStream((), False)`:                          "needs the names of the sources",
		`ServerDataStream(("x",))`:                             "missing argument for produces_examples",
		`ServerDataStream(("x",), False, axis_labels = 3)`:     "axis_labels must be a dict or None, got int",
		`start_server(ServerDataStream(("x",), False), hwm=0)`: "start_server: hwm must be positive, got 0",
	} {
		_, err := starlib.ExecFile("bad.star", []byte("load(\"fuel.streams\", \"ServerDataStream\")\nload(\"fuel.server\", \"start_server\")\n"+src+"\n"), starlib.Options{Library: all.Library()})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(starlib.Backtrace(err), "bad.star:3") {
			t.Errorf("%s: %v, want %q at bad.star:3", src, err, want)
		}
	}
}
