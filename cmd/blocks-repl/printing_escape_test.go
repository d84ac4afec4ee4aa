package main

import (
	"strings"
	"testing"
)

// TestPrintingEscapesLogValues (issue 24 item 8): the log values and keys
// that Printing shows during training are untrusted text (a resumed
// checkpoint's script writes them), so control characters reach the
// terminal escaped, as print() and errors do.
func TestPrintingEscapesLogValues(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs blocks-repl")
	}
	script := writeScript(t, "p.star", `
load("blocks.algorithms", "UpdatesAlgorithm")
load("blocks.extensions", "FinishAfter", "Printing", "SimpleExtension")
load("blocks.main_loop", "MainLoop")
load("fuel.datasets", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "SequentialScheme")
stream = DataStream(IndexableDataset({"x": [1.0, 2.0]}), iteration_scheme = SequentialScheme(2, batch_size = 1))
def record(main_loop, which_callback, *args):
    main_loop.log.current_row["note"] = "ok\x1b[2K\x1b[1Gspoofed\x1b]52;c;cm0gLXJmIH4=\x07"
    main_loop.log.current_row["key\x1b[31m"] = 1
main_loop = MainLoop(algorithm = UpdatesAlgorithm(on_unused_sources = "ignore"), data_stream = stream,
                     extensions = [SimpleExtension(record, after_epoch = True), FinishAfter(after_n_epochs = 1), Printing()])
main_loop.run()
`)
	code, out, errs := runBinary(t, "", "run", script)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if strings.ContainsRune(out, 0x1b) || strings.ContainsRune(out, 0x07) {
		t.Errorf("Printing wrote control characters raw:\n%q", out)
	}
	for _, want := range []string{`note: ok\x1b[2K\x1b[1Gspoofed\x1b]52;c;cm0gLXJmIH4=\x07`, `key\x1b[31m: 1`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
