package starlib_test

import (
	"testing"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// A class defined at the REPL: its instances stay mutable from chunk to
// chunk (the REPL freezes each chunk's globals), a script brick too.
func TestClassesAtTheREPL(t *testing.T) {
	s := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s.run(`load("assert", "assert")
def _init(self, n):
    self.n = n
def _bump(self):
    self.n += 1
    return self.n
Counter = type("Counter", (object,), {"__init__": _init, "bump": _bump})
c = Counter(1)`)
	s.run(`c.bump()
c.extra = [1]`)
	s.run(`c.extra.append(2)
assert.eq((c.bump(), c.extra), (3, [1, 2]))`)
	s.run(`load("blocks.bricks", "Brick")
load("blocks.bricks.base", "application")
B = type("B", (Brick,), {"apply": application(lambda self, x: x + 1)})
b = B()`)
	s.run(`b.note = "set later"
assert.eq((b.note, b.name), ("set later", "b"))`)
	s.fails(`Counter(1, 2)`, "_init")
}
