package starlib_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// FuzzFuelData feeds Fuel's dataset, stream, scheme and transformer
// builtins with data drawn from the input: strings, nested lists (empty
// ones too), numbers, None, bools, dicts of sources and mixtures of them,
// through one of several pipelines, read to the end. A builtin may refuse
// the data, with a Starlark error; it must never panic (the loader's
// wrapper reports a panic as "internal error"), overflow the stack or
// hang.
func FuzzFuelData(f *testing.F) {
	f.Add([]byte("\x00\x03\x41\x42"), uint8(0))
	f.Add([]byte("\x04\x02\x10\x11\x12\x05\x00"), uint8(2))
	f.Add([]byte("\x06\x05\x01\x02\x07\x03"), uint8(3))
	f.Add([]byte("\x08\x02\x09\x0a\x0b"), uint8(6))
	f.Add([]byte("\x05\x00\x05\x01\x30"), uint8(11))
	f.Add([]byte("\x0c\x02\x03\x48\x49\x50"), uint8(9))
	f.Fuzz(func(t *testing.T, plan []byte, pipe uint8) {
		g := &fuzzGen{plan: plan}
		examples := make([]string, g.int()%6)
		for k := range examples {
			examples[k] = g.value(1)
		}
		data := "[" + strings.Join(examples, ", ") + "]"
		if g.int()%3 == 0 {
			data = fmt.Sprintf("{%q: %s, %q: %s}", "features", data, "targets", g.value(0))
		} else if g.int()%5 == 0 {
			data = g.value(0) // not a list of examples at all
		}
		src := fuelFuzzScript(data, int(pipe), 1+g.int()%4)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		in, err := starlib.NewInterp(starlib.Options{FloatX: "float32", Context: ctx, Stdout: discard{}, Library: all.Library()})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := in.ExecFile("fuzz.star", []byte(src))
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%v\n%s", err, src)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("did not return in 30s:\n%s", src)
		}
	})
}

// fuzzGen draws Starlark source text for a value from the input bytes.
type fuzzGen struct {
	plan []byte
	i    int
}

func (g *fuzzGen) int() int {
	if g.i >= len(g.plan) {
		return 0
	}
	g.i++
	return int(g.plan[g.i-1])
}

var fuzzAtoms = []string{"0", "1", "-3", "7", "2.5", "-0.5", "True", "False", "None", `""`, `"a"`,
	`"Hello world!"`, `"é"`, "1e300", `float("nan")`, `float("inf")`, "255", "(1, 2)", "()", "{}"}

func (g *fuzzGen) value(depth int) string {
	b := g.int()
	switch {
	case depth >= 4 || b < 0x20:
		return fuzzAtoms[b%len(fuzzAtoms)]
	case b < 0x28:
		return fmt.Sprintf("range(%d)", b%5)
	case b < 0x30:
		return fmt.Sprintf("arange(%d)", b%6)
	case b < 0x38:
		return fmt.Sprintf("zeros((%d, %d))", b%3, 1+b%2)
	}
	n := g.int() % 5
	items := make([]string, n)
	for k := range items {
		items[k] = g.value(depth + 1)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// fuelFuzzScript is the script of one fuzz run: a dataset of data, the
// pipeline numbered pipe, every epoch read to its end (capped).
func fuelFuzzScript(data string, pipe, k int) string {
	pipes := []string{
		`DataStream(ds)`,
		`DataStream(ds)`,
		`Batch(DataStream(ds), ConstantScheme(K))`,
		`Padding(Batch(DataStream(ds), ConstantScheme(K)))`,
		`Mapping(DataStream(ds), lambda x: x)`,
		`Filter(DataStream(ds), lambda x: len(x) > 0)`,
		`Merge([DataStream(ds), DataStream(ds)], tuple(["s%d" % i for i in range(2 * len(ds.sources))]))`,
		`Unpack(Batch(DataStream(ds), ConstantScheme(K)))`,
		`Cache(Batch(DataStream(ds), ConstantScheme(K)), ConstantScheme(K + 1))`,
		`DataStream(ds, iteration_scheme = SequentialScheme(ds.num_examples, K))`,
		`DataStream(ds, iteration_scheme = ShuffledScheme(ds.num_examples, K))`,
		`NGrams(K, DataStream(ds))`,
		`Window(0, K, K, True, DataStream(ds))`,
		`Flatten(Batch(DataStream(ds), ConstantScheme(K)))`,
		`ScaleAndShift(Batch(DataStream(ds), ConstantScheme(K)), 2.0, -1.0)`,
		`Cast(DataStream(ds), "int64")`,
		`Mapping(DataStream(ds), SortMapping(lambda x: x[0]))`,
		`MultiProcessing(DataStream(ds), max_store = K)`,
		`ForceFloatX(DataStream(ds))`,
		`Batch(DataStream(ds), ConstantScheme(K), strictness = 2)`,
	}
	maker := []string{"IterableDataset", "IndexableDataset"}[pipe/len(pipes)%2]
	p := strings.ReplaceAll(pipes[pipe%len(pipes)], "K", fmt.Sprint(k))
	return fmt.Sprintf(`
load("fuel.datasets", "IterableDataset", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ConstantScheme", "SequentialScheme", "ShuffledScheme")
load("fuel.transformers", "Batch", "Padding", "Mapping", "Filter", "Merge", "Unpack", "Cache", "Flatten",
     "ScaleAndShift", "Cast", "SortMapping", "MultiProcessing", "ForceFloatX")
load("fuel.transformers.sequences", "NGrams", "Window")
load("numpy", "arange", "zeros")
ds = %s(%s)
print(ds.num_examples, ds.sources, ds.axis_labels)
s = %s
for as_dict in [False, True]:
    it = s.get_epoch_iterator(as_dict = as_dict)
    n = 0
    for x in it:
        n += 1
        if n == 2:
            break
    st = it.get_state()
    for x in it:
        n += 1
        if n > 200:
            break
    print(n, s.sources, s.axis_labels, st)
    list(s.resume_epoch_iterator(st))
`, maker, data, p)
}
