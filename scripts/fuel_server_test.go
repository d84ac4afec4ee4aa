package scripts

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/blocks-go/blocks/fuel/server"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
	starfuel "github.com/blocks-go/blocks/starlib/fuel"
)

// TestTrainFromServer serves scripts/serve_mnist.star's stream from a
// server in this process and trains scripts/train_from_server.star on
// it: the logged numbers are the demo's, bit for bit, since the served
// batches are those the demo draws itself.
func TestTrainFromServer(t *testing.T) {
	t.Setenv("FUEL_FLOATX", "float32")
	src, err := os.ReadFile("serve_mnist.star")
	if err != nil {
		t.Fatal(err)
	}
	g, err := starlib.ExecFile("serve_mnist.star", src, starlib.Options{Library: all.Library()})
	if err != nil {
		t.Fatal(starlib.Backtrace(err))
	}
	st := g["stream"].(*starfuel.Stream)
	srv, err := server.Listen(st.S, server.Options{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop")
		}
	}()

	sets := map[string]string{"epochs": "2"}
	served, _ := run(t, "train_from_server.star", map[string]string{"epochs": "2", "port": strconv.Itoa(srv.Port())})
	local, _ := run(t, "demo.star", sets)
	for _, it := range []int{0, 100, 200} {
		for _, key := range []string{"test_cost_with_regularization", "test_error_rate"} {
			a, b := logValue(t, served, it, key), logValue(t, local, it, key)
			if a != b {
				t.Errorf("iteration %d %s: %v through the server, %v in-process", it, key, a, b)
			}
		}
	}
	t.Logf("after 2 epochs through the server: test error %.4f", logValue(t, served, 200, "test_error_rate"))
}
