package starlib_test

import (
	"fmt"
	"log"
	"os"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// A script run from Go with the standard library of modules: a tunable
// declared with config(...) is set from Go as blocks-repl run --set sets
// it, the script prints to Options.Stdout, and Go reads its globals.
func ExampleExecFile() {
	const src = `
load("blocks.config", "config")
load("numpy", "arange")

cfg = config(scale = 1.0)
values = (arange(4) * cfg.scale).tolist()
print("scaled by", cfg.scale)
`
	globals, err := starlib.ExecFile("scale.star", []byte(src), starlib.Options{
		Library:   all.Library(),
		Overrides: map[string]string{"scale": "2.5"},
		Stdout:    os.Stdout,
	})
	if err != nil {
		log.Fatal(starlib.Backtrace(err))
	}
	values := globals["values"].(*starlark.List)
	fmt.Println(values.Len(), "values:", values)
	// Output:
	// scaled by 2.5
	// 4 values: [0.0, 2.5, 5.0, 7.5]
}
