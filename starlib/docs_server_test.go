package starlib_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// Fuel's docs/server.rst, "Putting it together": server.py runs
// start_server(create_data_stream()) in one script, train.py -p reads
// ServerDataStream(('features',)) for 5 epochs in another, over ZeroMQ on
// a loopback port; train.py without -p reads create_data_stream() itself.
// Both read 5 epochs of 10 batches of (100, 128) zeros.
func TestDocsServerTwoScripts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	lib, err := filepath.Abs("testdata/upstream/fuel/lib/docs_server.star")
	if err != nil {
		t.Fatal(err)
	}
	server := `load("` + lib + `", "create_data_stream")
load("fuel.server", "start_server")
start_server(create_data_stream(), port = PORT)
`
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		_, err := starlib.ExecFile("server.star", []byte(server), starlib.Options{Library: all.Library(), Context: ctx, Stdout: discard{},
			Predeclared: starlark.StringDict{"PORT": starlark.MakeInt(port)}})
		served <- err
	}()
	defer func() {
		cancel()
		select {
		case err := <-served:
			if err == nil || !strings.Contains(err.Error(), "cancel") {
				t.Errorf("server.star: %v, want its cancellation", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("server.star did not stop within 20 s of its cancellation")
		}
	}()
	train := `load("assert", "assert")
load("` + lib + `", "create_data_stream")
load("fuel.streams", "ServerDataStream")
def train(parallel):
    if parallel:
        data_stream = ServerDataStream(("features",), False, port = PORT, timeout = 60)
    else:
        data_stream = create_data_stream()
    n = 0
    for i in range(5):
        for data in data_stream.get_epoch_iterator():
            assert.eq(data[0].shape, (100, 128))
            assert.eq(data[0].sum(), 0)
            n += 1
    return n
assert.eq(train(False), 50)
assert.eq(train(True), 50)
`
	in, err := starlib.NewInterp(starlib.Options{Library: all.Library(), Stdout: os.Stdout, Modules: map[string]*starlarkstruct.Module{"assert": assertModule},
		Predeclared: starlark.StringDict{"PORT": starlark.MakeInt(port)}})
	if err != nil {
		t.Fatal(err)
	}
	in.Thread.SetLocal(reporterKey, t)
	if _, err := in.ExecFile("train.star", []byte(train)); err != nil {
		t.Fatal(starlib.Backtrace(err))
	}
}
