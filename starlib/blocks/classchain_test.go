package blocks_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/bricks"
	"github.com/blocks-go/blocks/starlib/blocks"
)

// TestBrickChainsAgreeWithGoTypes checks, for every brick class, that the
// class chain scripts see (isinstance) starts with the class, ends with
// Brick, and says Initializable and Activation exactly where the Go
// brick's type does (bricks.IsInitializable, *bricks.Activation): that
// the front end's class tables and the Go hierarchy agree.
func TestBrickChainsAgreeWithGoTypes(t *testing.T) {
	classes := blocks.BrickClasses()
	var names []string
	for name := range brickExamples {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ex := brickExamples[name]
		g := runBrickExample(t, classes, "b = "+strings.Replace(ex.src, "@", "", 1))
		b, ok := g["b"].(*blocks.Brick)
		if !ok {
			t.Errorf("%s: made a %s, not a brick", name, g["b"].Type())
			continue
		}
		chain := blocks.BrickChain(b.B)
		if chain[0] != name || chain[len(chain)-1] != "Brick" {
			t.Errorf("%s: class chain %v", name, chain)
		}
		if got, want := slices.Contains(chain, "Initializable"), bricks.IsInitializable(b.B); got != want {
			t.Errorf("%s: chain %v has Initializable %v, the Go brick %v", name, chain, got, want)
		}
		_, act := b.B.(*bricks.Activation)
		if got := slices.Contains(chain, "Activation"); got != act {
			t.Errorf("%s: chain %v has Activation %v, the Go brick %v", name, chain, got, act)
		}
	}
}
