package starlib_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// compileChunk compiles and calls a function, and evaluates a variable:
// both compile for the run's device.
const compileChunk = `f = function([x], x * 2)
assert.eq(f([1.0, 2.0]).tolist(), [2.0, 4.0])
assert.eq((x * 3).eval({x: [1.0]}).tolist(), [3.0])
`

const deviceSetup = `load("assert", "assert")
load("blocks.config", "config")
load("theano", "function")
load("tensor", "vector")
x = vector("x")
`

// The device is the run's: a session whose device is cuda:1 (as a GPU
// build's --device cuda:1 would make it; this build has no CUDA backend,
// so its functions are refused) leaves another session, a new session
// and a script run on the CPU; config.device set in one session changes
// that session only.
func TestDeviceIsPerRun(t *testing.T) {
	opts := starlib.Options{Library: all.Library(), Stdout: discard{}}
	gpu := newREPLSession(t, opts)
	starlib.SetDeviceUnchecked(gpu.in, device.Device{Kind: device.CUDA, Index: 1})
	cpu := newREPLSession(t, opts)
	gpu.run(deviceSetup)
	cpu.run(deviceSetup)

	gpu.run(`assert.eq(config.device, "cuda:1")`)
	gpu.fails(`f = function([x], x * 2)`, "no cuda backend in this build")
	gpu.fails(`(x * 3).eval({x: [1.0]})`, "no cuda backend in this build")
	cpu.run(`assert.eq(config.device, "cpu")`)
	cpu.run(compileChunk)

	// A script's config.device = "cpu" moves that run only.
	other := newREPLSession(t, opts)
	starlib.SetDeviceUnchecked(other.in, device.Device{Kind: device.CUDA, Index: 1})
	other.run(deviceSetup)
	gpu.run(`config.device = "cpu"
assert.eq(config.device, "cpu")`)
	gpu.run(compileChunk)
	other.run(`assert.eq(config.device, "cuda:1")`)
	other.fails(`f = function([x], x * 2)`, "no cuda backend in this build")

	// A new session and a script run start on the CPU.
	fresh := newREPLSession(t, opts)
	fresh.run(deviceSetup + `assert.eq(config.device, "cpu")` + "\n" + compileChunk)
	run := newREPLSession(t, opts)
	if _, err := run.in.ExecFile("run.star", []byte(deviceSetup+`assert.eq(config.device, "cpu")`+"\n"+compileChunk)); err != nil {
		t.Fatal(err)
	}
}

// Runs in one process set and read their devices concurrently (go test
// -race checks that nothing is shared).
func TestDeviceConcurrentRuns(t *testing.T) {
	var wg sync.WaitGroup
	sessions := make([]*replSession, 4)
	for i := range sessions {
		sessions[i] = newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	}
	errs := make([]error, len(sessions))
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := "cpu"
			if i%2 == 1 {
				starlib.SetDeviceUnchecked(s.in, device.Device{Kind: device.CUDA, Index: i})
				want = fmt.Sprintf("cuda:%d", i)
			}
			if _, err := s.in.ExecREPL(context.Background(), deviceSetup); err != nil {
				errs[i] = err
				return
			}
			for range 20 {
				_, err := s.in.ExecREPL(context.Background(), fmt.Sprintf(`assert.eq(config.device, %q)
f = function([x], x * 2)`, want))
				if i%2 == 0 && err != nil {
					errs[i] = err
					return
				}
				if i%2 == 1 && (err == nil || !strings.Contains(err.Error(), "no cuda backend")) {
					errs[i] = fmt.Errorf("session on %s: %v, want the missing CUDA backend", want, err)
					return
				}
				if i == 0 {
					_, err = s.in.ExecREPL(context.Background(), `config.device = "cpu"`)
					if err != nil {
						errs[i] = err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("session %d: %v", i, err)
		}
	}
}

// Options.Device and config.device are checked: a device this build cannot
// use is refused before the run starts, or at the line that names it,
// which leaves the run's device as it was.
func TestDeviceChecked(t *testing.T) {
	if strings.Contains(device.Build, "CUDA build") {
		t.Skip("the CUDA build accepts a CUDA device where a GPU is present")
	}
	for _, c := range []struct{ dev, want string }{
		{"cuda:0", "CPU build"},
		{"tpu", "unknown device"},
	} {
		if _, err := starlib.NewInterp(starlib.Options{Library: all.Library(), Device: c.dev}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Options.Device %q: %v, want an error containing %q", c.dev, err, c.want)
		}
	}
	s := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}, Device: "cpu"})
	s.run(deviceSetup + `assert.eq(config.device, "cpu")`)
	s.fails(`config.device = "cuda"`, "CPU build")
	s.fails(`config.device = 3`, `config.device: want a string such as "cpu" or "cuda:0", got int`)
	s.fails(`config.floatX = "float64"`, "config.floatX cannot be set")
	s.run(`assert.eq(config.device, "cpu")` + "\n" + compileChunk)
}

// blocks.config's config.floatX is the run's floatX (Options.FloatX), as
// fuel.config's and theano.config's are, not the environment's.
func TestConfigFloatXIsTheRuns(t *testing.T) {
	t.Setenv("FUEL_FLOATX", "float32")
	s := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}, FloatX: "float64"})
	s.run(deviceSetup + `assert.eq(config.floatX, "float64")`)
	s2 := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s2.run(deviceSetup + `assert.eq(config.floatX, "float32")`)
}
