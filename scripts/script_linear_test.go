package scripts

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
	"github.com/blocks-go/blocks/train/algorithms"
)

// scriptLinearGraph runs script_linear.star and returns its cost graph
// printed (the script class's name written as the built-in's, the only
// difference there may be) and its parameters after training.
func scriptLinearRun(t testing.TB, script bool, steps string) (string, map[string][]float64) {
	t.Helper()
	g, _ := run(t, "script_linear.star", map[string]string{"script_linear": map[bool]string{true: "True", false: "False"}[script], "steps": steps})
	cg := g["cg"].(*starblocks.ComputationGraph).G
	var b bytes.Buffer
	if err := cg.Print(&b, map[string][]int{"features": {256, 784}, "targets": {256, 1}}); err != nil {
		t.Fatal(err)
	}
	params := map[string][]float64{}
	for _, p := range cg.Parameters() {
		key := p.Name
		for _, a := range p.Tag.Annotations {
			key = a.AnnotationName() + "." + key
			break
		}
		params[strings.ReplaceAll(key, "ScriptLinear", "Linear")] = p.Value().Astype(nd.Float64).Float64s()
	}
	return strings.ReplaceAll(b.String(), "ScriptLinear", "Linear"), params
}

// A Linear defined in the script as Blocks defines it (W, b, tensor.dot
// plus the broadcast add of b) in the tutorial's model gives the same
// graph as the built-in Linear, variable for variable (names, ops, roles,
// shapes, bricks), and trains bit for bit as it (issue 34).
func TestScriptLinearSameAsBuiltin(t *testing.T) {
	builtinGraph, builtinParams := scriptLinearRun(t, false, "5")
	scriptGraph, scriptParams := scriptLinearRun(t, true, "5")
	if builtinGraph != scriptGraph {
		t.Errorf("the graphs differ:\nbuilt-in:\n%s\nscript:\n%s", builtinGraph, scriptGraph)
	}
	if len(builtinParams) != 4 || len(scriptParams) != len(builtinParams) {
		t.Fatalf("parameters: built-in %d, script %d, want 4 each", len(builtinParams), len(scriptParams))
	}
	for k, want := range builtinParams {
		got, ok := scriptParams[k]
		if !ok {
			t.Errorf("the script model has no parameter %s (it has %v)", k, keys(scriptParams))
			continue
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Errorf("%s[%d]: script %v, built-in %v after 5 steps", k, i, got[i], want[i])
				break
			}
		}
	}
}

func keys(m map[string][]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// BenchmarkScriptLinearStep (make bench) times training steps (SGD,
// batch 256) of the tutorial's model with the built-in Linear and with
// the script's, alternating one step of each (in turn first) so that the
// machine's load falls on both alike: metrics builtin-ns/step and script-ns/step (the
// medians of the steps' times), script/builtin, their ratio, and
// script/builtin-min, the ratio of the fastest steps.
func BenchmarkScriptLinearStep(b *testing.B) {
	setup := func(script bool) (*algorithms.GradientDescent, map[string]*nd.Array) {
		g, _ := run(b, "script_linear.star", map[string]string{"script_linear": map[bool]string{true: "True", false: "False"}[script], "steps": "3"})
		data := map[string]*nd.Array{}
		for _, kv := range g["batch"].(*starlark.Dict).Items() {
			data[string(kv[0].(starlark.String))] = kv[1].(*starlib.Array).A
		}
		return g["algorithm"].(*starblocks.Algorithm).GD, data
	}
	builtin, builtinData := setup(false)
	script, scriptData := setup(true)
	var tb, ts []float64
	step := func(gd *algorithms.GradientDescent, data map[string]*nd.Array) float64 {
		start := time.Now()
		if err := gd.ProcessBatch(data); err != nil {
			b.Fatal(err)
		}
		return float64(time.Since(start).Nanoseconds())
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			tb = append(tb, step(builtin, builtinData))
			ts = append(ts, step(script, scriptData))
		} else {
			ts = append(ts, step(script, scriptData))
			tb = append(tb, step(builtin, builtinData))
		}
	}
	mb, ms := median(tb), median(ts)
	b.ReportMetric(mb, "builtin-ns/step")
	b.ReportMetric(ms, "script-ns/step")
	b.ReportMetric(ms/mb, "script/builtin")
	// The fastest step of each: what the load inflates least.
	b.ReportMetric(slices.Min(ts)/slices.Min(tb), "script/builtin-min")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
