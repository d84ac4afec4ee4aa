package starlib_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel/server"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
)

// serveForChunk is a chunk's "# option:serve FILE": FILE (beside the
// chunk's file) is run and its global stream served by a data server on a
// free loopback port for the chunk's duration, as Fuel's test_server.py
// starts start_server in another process; the chunk reads the port as the
// setting server_port (config.get("server_port")).
func serveForChunk(t *testing.T, c *chunk) {
	t.Helper()
	file := filepath.Join(filepath.Dir(c.file), c.serve)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%s:%d: option:serve: %v", c.file, c.firstLine, err)
	}
	g, err := starlib.ExecFile(file, src, starlib.Options{Stdout: io.Discard, FloatX: c.floatX, Library: all.Library()})
	if err != nil {
		t.Fatalf("%s: %v", file, starlib.Backtrace(err))
	}
	st, ok := g["stream"].(*starfuel.Stream)
	if !ok {
		t.Fatalf("%s defines no global stream to serve", file)
	}
	srv, err := server.Listen(st.S, server.Options{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: server: %v", file, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the server did not stop within 10 s of its cancellation", file)
		}
	})
	c.overrides["server_port"] = strconv.Itoa(srv.Port())
}
