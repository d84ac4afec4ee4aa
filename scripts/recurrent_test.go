package scripts

import (
	"os"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

func global(t *testing.T, g starlark.StringDict, name string) float64 {
	t.Helper()
	v, ok := g[name]
	if !ok {
		t.Fatalf("the script left no global %s", name)
	}
	f, ok := starlark.AsFloat(v)
	if !ok {
		t.Fatalf("%s = %v is not a number", name, v)
	}
	return f
}

func acceptOnly(t *testing.T) {
	if os.Getenv("BLOCKS_ACCEPT") == "" {
		t.Skip("long run: set BLOCKS_ACCEPT=1 (make accept)")
	}
}

// TestParityProblem: the LSTM computes running parity exactly on test
// sequences three times longer than the training ones. With the script's
// settings it is solved after epoch 11 of 30; the short run gives it 15.
func TestParityProblem(t *testing.T) {
	g, out := run(t, "parity_problem.star", map[string]string{"epochs": "15", "verbose": "False"})
	t.Log(strings.TrimSpace(out))
	if e := global(t, g, "solved_after"); e > 15 {
		t.Errorf("parity not solved within 15 epochs")
	}
	if r := logValue(t, g, 15*50, "test_error_rate"); r != 0 {
		t.Errorf("test error rate after 15 epochs: %g, want 0", r)
	}
}

// TestMarkovChainShort runs the Markov-chain generator briefly: training
// lowers the cost and sampling draws valid states. TestAcceptMarkovChain
// checks the transition statistics.
func TestMarkovChainShort(t *testing.T) {
	g, out := run(t, "markov_chain.star", map[string]string{"epochs": "3", "sample_steps": "300", "verbose": "False"})
	t.Log(strings.TrimSpace(out))
	first := logValue(t, g, 10, "train_sequence_log_likelihood")
	last := logValue(t, g, 30, "train_sequence_log_likelihood")
	if !(last < first) {
		t.Errorf("cost did not decrease: %g after epoch 1, %g after epoch 3", first, last)
	}
}

// TestAcceptMarkovChain: after the script's 200 epochs, the transition
// frequencies of 20,000 sampled states differ from the chain's
// probabilities by at most 0.05 (measured: 0.040; the sampling noise alone
// has a standard deviation of about 0.0125 in the rarest state's row).
func TestAcceptMarkovChain(t *testing.T) {
	acceptOnly(t)
	start := time.Now()
	g, out := run(t, "markov_chain.star", map[string]string{"verbose": "False"})
	t.Logf("%s\n(%.1fs)", strings.TrimSpace(out), time.Since(start).Seconds())
	if e := global(t, g, "max_error"); e > 0.05 {
		t.Errorf("largest transition-frequency difference %.3f > 0.05", e)
	}
}

// TestReverseWordsShort: a short run on an easier alphabet (10 letters,
// words of 2–6) already reverses most held-out words.
func TestReverseWordsShort(t *testing.T) {
	g, out := run(t, "reverse_words.star", map[string]string{
		"epochs": "3", "letters": "10", "min_len": "2", "max_len": "6", "learning_rate": "0.1",
		"num_test": "50", "verbose": "False"})
	t.Log(strings.TrimSpace(out))
	if a := global(t, g, "accuracy"); a < 0.8 {
		t.Errorf("held-out accuracy %.2f < 0.8", a)
	}
}

// TestAcceptReverseWords: the script's settings (26 letters, words of 3–8
// letters, 2,000 training words, 10 epochs) reverse at least 80% of 200
// held-out words exactly with beam search.
func TestAcceptReverseWords(t *testing.T) {
	acceptOnly(t)
	start := time.Now()
	g, out := run(t, "reverse_words.star", map[string]string{"verbose": "False"})
	t.Logf("%s\n(%.1fs)", strings.TrimSpace(out), time.Since(start).Seconds())
	if a := global(t, g, "accuracy"); a < 0.8 {
		t.Errorf("held-out accuracy %.2f < 0.8", a)
	}
}

// TestRecurrentRunsBitIdentical: two runs of a recurrent script give the
// same parameters, bit for bit (the loop and its gradient run in a fixed
// order; data and initial values come from numpy's generator).
func TestRecurrentRunsBitIdentical(t *testing.T) {
	params := func() []string {
		g, _ := run(t, "parity_problem.star", map[string]string{"epochs": "2", "verbose": "False"})
		var out []string
		for _, name := range []string{"x_to_h", "lstm", "h_to_o"} {
			b, ok := g[name].(starlark.HasAttrs)
			if !ok {
				t.Fatalf("no brick %s", name)
			}
			ps, err := b.Attr("parameters")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ps.String())
			it := ps.(starlark.Iterable).Iterate()
			var p starlark.Value
			for it.Next(&p) {
				v, err := starlark.Call(&starlark.Thread{}, mustAttr(t, p, "get_value"), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				l, err := starlark.Call(&starlark.Thread{}, mustAttr(t, v, "tolist"), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, l.String())
			}
			it.Done()
		}
		return out
	}
	a, b := params(), params()
	if len(a) != 3+2+6+2 {
		t.Fatalf("read %d parameter lists, want 13", len(a))
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Error("two runs of parity_problem.star gave different parameters")
	}
}

func mustAttr(t *testing.T, v starlark.Value, name string) starlark.Value {
	t.Helper()
	a, err := v.(starlark.HasAttrs).Attr(name)
	if err != nil || a == nil {
		t.Fatalf("%s has no %s: %v", v.Type(), name, err)
	}
	return a
}
