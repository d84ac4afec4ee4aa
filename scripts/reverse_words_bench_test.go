package scripts

import (
	"syscall"
	"testing"
	"time"

	"go.starlark.net/starlark"

	starblocks "github.com/blocks-go/blocks/starlib/blocks"
)

// BenchmarkReverseWords (make bench) measures reverse_words.star's
// attention model, one op being: training tokens/s (the targets' tokens
// of one epoch over the time of the epoch) and beam search words/s (the
// script's search of its 200 held-out words, beam 3, timed here). Each
// also per CPU second (getrusage: user + system), which the machine's
// load inflates much less than the wall clock: the script is run for 1
// and for 2 epochs, and the difference is one epoch's CPU time.
func BenchmarkReverseWords(b *testing.B) {
	var trainTokens, trainSecs, trainCPU, words, beamSecs, beamCPU float64
	for range b.N {
		r := reverseWordsOnce(b)
		trainTokens += r.tokens
		trainSecs += r.secs
		trainCPU += r.epochCPU
		words += r.words
		beamSecs += r.beamSecs
		beamCPU += r.beamCPU
	}
	b.ReportMetric(trainTokens/trainSecs, "train-tokens/s")
	b.ReportMetric(trainTokens/trainCPU, "train-tokens/cpu-s")
	b.ReportMetric(words/beamSecs, "beam-words/s")
	b.ReportMetric(words/beamCPU, "beam-words/cpu-s")
}

type reverseWordsResult struct{ tokens, secs, epochCPU, words, beamSecs, beamCPU float64 }

func reverseWordsOnce(t testing.TB) reverseWordsResult {
	c0 := cpuSeconds()
	run(t, "reverse_words.star", map[string]string{"epochs": "1", "verbose": "False", "num_test": "1"})
	c1 := cpuSeconds()
	g, _ := run(t, "reverse_words.star", map[string]string{"epochs": "2", "verbose": "False", "num_test": "1"})
	epochCPU := (cpuSeconds() - c1) - (c1 - c0)
	ml := g["main_loop"].(*starblocks.MainLoop)
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
	return reverseWordsResult{tokens: float64(tokens), secs: secs, epochCPU: epochCPU,
		words: float64(len(words)), beamSecs: time.Since(start).Seconds(), beamCPU: cpuSeconds() - startCPU}
}

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
