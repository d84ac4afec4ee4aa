package scripts

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

// TestBenchReverseWords (BLOCKS_BENCH=1, make bench) measures
// reverse_words.star's attention model: training tokens/s (the targets'
// tokens of one epoch over the time of the epoch) and beam search words/s
// (the script's search of its 200 held-out words, beam 3, timed here).
// Each also in CPU seconds (getrusage: user + system), which the
// machine's load inflates much less than the wall clock: the script is
// run for 1 and for 2 epochs, and the difference is one epoch's CPU time.
func TestBenchReverseWords(t *testing.T) {
	if os.Getenv("BLOCKS_BENCH") == "" {
		t.Skip("set BLOCKS_BENCH=1 (make bench)")
	}
	c0 := cpuSeconds()
	run(t, "reverse_words.star", map[string]string{"epochs": "1", "verbose": "False", "num_test": "1"})
	c1 := cpuSeconds()
	g, _ := run(t, "reverse_words.star", map[string]string{"epochs": "2", "verbose": "False", "num_test": "1"})
	epochCPU := (cpuSeconds() - c1) - (c1 - c0)
	ml := g["main_loop"].(*starlib.MainLoop)
	secs, ok := starlark.AsFloat(starlibValue(ml.M.Log.CurrentRow()["time_train_this_epoch"]))
	if !ok || secs <= 0 {
		t.Fatal("no time_train_this_epoch in the log")
	}
	tokens := 0
	it := g["codes"].(starlark.Iterable).Iterate()
	var c starlark.Value
	for it.Next(&c) {
		tokens += c.(starlark.Sequence).Len()
	}
	it.Done()

	// Beam search of held-out words, as the script does.
	th := &starlark.Thread{Name: "bench"}
	search, err := g["search"].(starlark.HasAttrs).Attr("search")
	if err != nil {
		t.Fatal(err)
	}
	randomWord := g["random_word"]
	encode := g["encode"]
	var words []starlark.Value
	for len(words) < 200 {
		w, err := starlark.Call(th, randomWord, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		words = append(words, w)
	}
	start, startCPU := time.Now(), cpuSeconds()
	for _, w := range words {
		code, err := starlark.Call(th, encode, starlark.Tuple{w}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rows []starlark.Value
		n := code.(starlark.Sequence).Len()
		for i := range n {
			rows = append(rows, starlark.NewList([]starlark.Value{code.(starlark.Indexable).Index(i)}))
		}
		in := starlark.NewDict(1)
		if err := in.SetKey(g["source"], starlark.NewList(rows)); err != nil {
			t.Fatal(err)
		}
		if _, err := starlark.Call(th, search, starlark.Tuple{in, g["eos"], starlark.MakeInt(3 * n)},
			[]starlark.Tuple{{starlark.String("beam_size"), starlark.MakeInt(3)}}); err != nil {
			t.Fatal(err)
		}
	}
	ws := float64(len(words)) / time.Since(start).Seconds()
	wsCPU := float64(len(words)) / (cpuSeconds() - startCPU)
	fmt.Printf("RESULT impl=blocks-go model=reverse_words train_tokens_per_s=%.0f beam_words_per_s=%.1f train_tokens_per_cpu_s=%.0f beam_words_per_cpu_s=%.1f (load %s)\n",
		float64(tokens)/secs, ws, float64(tokens)/epochCPU, wsCPU, loadavg())
}

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return string(b[:14])
}
