package starlib_test

import (
	"encoding/json"
	"os/exec"
	"testing"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// The numpy module's generator against Debian's numpy (/usr/bin/python3),
// run live: the same calls in a script and in Python give the same numbers.
func TestNumpyRandomAgainstLiveNumpy(t *testing.T) {
	const calls = `[r.uniform(-1.0, 2.0, size=5).tolist(), r.normal(0.5, 2.0, size=4).tolist(),
 r.randint(3, 1000, size=6).tolist(), r.permutation(9).tolist(), r.uniform(), r.randint(7)]`
	script := "load('numpy.random', 'RandomState')\nr = RandomState(2015)\nout = " + calls + "\nl = list(range(8))\nr.shuffle(l)\nout.append(l)\n"
	py := "import json, numpy\nr = numpy.random.RandomState(2015)\nout = " + calls +
		"\nl = list(range(8))\nr.shuffle(l)\nout.append(l)\nprint(json.dumps(out))\n"
	raw, err := exec.Command("/usr/bin/python3", "-c", py).Output()
	if err != nil {
		t.Skipf("Debian's python3-numpy is not available (%v)", err)
	}
	var want []any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	g, err := starlib.ExecFile("live.star", []byte(script), starlib.Options{Library: all.Library()})
	if err != nil {
		t.Fatal(err)
	}
	got := toGo(g["out"])
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("script drew %s\nnumpy drew  %s", gb, wb)
	}
}

func toGo(v starlark.Value) any {
	switch v := v.(type) {
	case *starlark.List:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toGo(v.Index(i))
		}
		return out
	case starlark.Int:
		i, _ := v.Int64()
		return float64(i)
	case starlark.Float:
		return float64(v)
	}
	return v.String()
}
