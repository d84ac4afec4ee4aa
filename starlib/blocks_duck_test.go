package starlib_test

import (
	"bytes"
	"testing"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// TestPrintingAgainstAPlainMainLoop: Printing given a plain object as its
// main loop prints that object's status and current row.
func TestPrintingAgainstAPlainMainLoop(t *testing.T) {
	src := []byte(`load("blocks.extensions", "Printing")
def _init(self):
    self.log = self
    self.status = {"iterations_done": 30, "epochs_done": 3}
    self.current_row = {"cost": 0.5}
ML = type("ML", (object,), {"__init__": _init})
p = Printing(one_line = True)
p.main_loop = ML()
p.dispatch("after_epoch")
`)
	var out bytes.Buffer
	if _, err := starlib.ExecFile("printing.star", src, starlib.Options{Stdout: &out, Library: all.Library()}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "epoch 3 (iteration 30): cost 0.5\n"; got != want {
		t.Errorf("Printing printed %q, want %q", got, want)
	}
}
