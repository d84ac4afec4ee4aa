package starlib_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// shapeFuzzCalls are the array builtins that take a shape, as a format
// with the fuzzer's shape (a Starlark tuple) for %s.
var shapeFuzzCalls = []string{
	`zeros(%s, dtype = "float32")`,
	`ones(%s)`,
	`zeros((4, 6)).reshape(%s)`,
	`reshape(arange(24), %s)`,
	`random.RandomState(1).uniform(size = %s)`,
	`random.RandomState(1).normal(size = %s)`,
	`random.RandomState(1).randint(0, 3, size = %s)`,
	`random.RandomState(1).rand(*%s)`,
	`dot(zeros(%[1]s[:2], dtype = "float32"), zeros(%[1]s[1:3], dtype = "float32"))`,
	`dot(ones(%[1]s[:2]).T, ones(%[1]s[:2]))`,
	`x.reshape(%s).eval({x: arange(24.0).reshape((4, 6))})`,
	`arange(%[1]s[0] if %[1]s else 0)`,
}

// FuzzArrayShapes feeds adversarial shapes (dimensions near 2^31, 2^32,
// 2^62, negative, zero) to the builtins that build arrays: each must
// answer with an error or an array whose data holds exactly the elements
// its shape says, never a panic, a SIGSEGV or an allocation beyond the
// run's memory budget (64 MiB here).
func FuzzArrayShapes(f *testing.F) {
	edge := []int64{0, 1, 2, 3, 4, 6, -1, -2, 1 << 31, 1<<31 - 1, 1 << 32, 1<<32 + 1, 1 << 62, 1<<62 + 1, 1<<63 - 1, -1 << 63, 1 << 20}
	for i := range shapeFuzzCalls {
		f.Add(uint8(i), int64(1<<62), int64(4), int64(0), uint8(2))
		f.Add(uint8(i), int64(1<<32), int64(1<<32), int64(1), uint8(3))
		f.Add(uint8(i), int64(4), int64(-1), int64(6), uint8(2))
		f.Add(uint8(i), int64(1<<31), int64(0), int64(1<<31), uint8(3))
	}
	f.Add(uint8(0), edge[5], edge[9], edge[3], uint8(1))
	f.Fuzz(func(t *testing.T, which uint8, d0, d1, d2 int64, ndim uint8) {
		dims := []int64{d0, d1, d2}[:int(ndim)%4]
		parts := make([]string, len(dims))
		for i, d := range dims {
			parts[i] = fmt.Sprint(d)
		}
		shape := "(" + strings.Join(parts, ", ") + ",)"
		if len(dims) == 0 {
			shape = "()"
		}
		call := fmt.Sprintf(shapeFuzzCalls[int(which)%len(shapeFuzzCalls)], shape)
		src := "load(\"numpy\", \"zeros\", \"ones\", \"arange\", \"reshape\", \"dot\", \"random\")\n" +
			"load(\"tensor\", \"matrix\")\nx = matrix(\"x\")\nr = " + call + "\n"
		g, err := starlib.ExecFile("shapes.star", []byte(src), starlib.Options{FloatX: "float32", Stdout: &strings.Builder{},
			Limits: starlib.Limits{MaxMemory: 64 << 20}, Library: all.Library()})
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("%s: %v", call, err)
			}
			return
		}
		a, ok := g["r"].(*starlib.Array)
		if !ok {
			return
		}
		if err := a.A.Consistent(); err != nil {
			t.Fatalf("%s: %v", call, err)
		}
		if b, ok := nd.Bytes(a.A.DType(), a.A.Shape); !ok || b > 64<<20 {
			t.Fatalf("%s: an array of shape %v beyond the budget", call, a.A.Shape)
		}
	})
}
