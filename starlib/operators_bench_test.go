package starlib

import (
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// BenchmarkCompareRewrite measures what the rewrite of comparisons into
// hidden builtins costs ordinary comparisons: a loop of 1000 int ==, a
// loop of 1000 int <, a loop of 1000 string ==, and what the rewrite of
// index keys costs (1000 list indices, 1000 dict lookups by a name), each
// as Starlark runs it (plain) and rewritten (operators.go).
func BenchmarkCompareRewrite(b *testing.B) {
	loops := map[string]string{
		"int_eq":    "def f():\n    n = 0\n    for i in range(1000):\n        if i == 500:\n            n += 1\n    return n\nf()\n",
		"int_lt":    "def f():\n    n = 0\n    for i in range(1000):\n        if i < 500:\n            n += 1\n    return n\nf()\n",
		"string_eq": "def f():\n    n = 0\n    for s in ['a', 'b'] * 500:\n        if s == 'a':\n            n += 1\n    return n\nf()\n",
		"empty":     "def f():\n    n = 0\n    for i in range(1000):\n        n += 1\n    return n\nf()\n",
		"index":     "def f():\n    n = 0\n    l = [1, 2]\n    for i in range(1000):\n        n += l[i & 1]\n    return n\nf()\n",
		"dict_key":  "def f():\n    n = 0\n    d = {0: 1, 1: 2}\n    for i in range(1000):\n        k = i & 1\n        n += d[k]\n    return n\nf()\n",
	}
	opts := &syntax.FileOptions{TopLevelControl: true}
	for _, name := range []string{"empty", "int_eq", "int_lt", "string_eq", "index", "dict_key"} {
		for _, rewrite := range []bool{false, true} {
			label := name + "/plain"
			if rewrite {
				label = name + "/rewritten"
			}
			b.Run(label, func(b *testing.B) {
				f, err := opts.Parse("bench.star", loops[name], 0)
				if err != nil {
					b.Fatal(err)
				}
				if rewrite {
					rewriteOperators(f)
				}
				pre := hiddenOperators()
				prog, err := starlark.FileProgram(f, func(n string) bool { _, ok := pre[n]; return ok })
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := prog.Init(&starlark.Thread{}, pre); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
