package scripts

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
)

// TestBenchReverseWords (BLOCKS_BENCH=1, make bench) measures
// reverse_words.star's attention model: training tokens/s (the targets'
// tokens of one epoch over the time of the epoch) and beam search words/s
// (the script's search of its 200 held-out words, beam 3, timed here).
// BENCH_RW_EPOCHS (default 1) epochs are trained first.
func TestBenchReverseWords(t *testing.T) {
	if os.Getenv("BLOCKS_BENCH") == "" {
		t.Skip("set BLOCKS_BENCH=1 (make bench)")
	}
	epochs := os.Getenv("BENCH_RW_EPOCHS")
	if epochs == "" {
		epochs = "1"
	}
	g, _ := run(t, "reverse_words.star", map[string]string{"epochs": epochs, "verbose": "False", "num_test": "1"})
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
	rng := g["rng"]
	randomWord := g["random_word"]
	encode := g["encode"]
	_ = rng
	var words []starlark.Value
	for len(words) < 200 {
		w, err := starlark.Call(th, randomWord, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		words = append(words, w)
	}
	start := time.Now()
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
	fmt.Printf("RESULT impl=blocks-go model=reverse_words train_tokens_per_s=%.0f beam_words_per_s=%.1f (load %s)\n",
		float64(tokens)/secs, ws, loadavg())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return string(b[:14])
}
