package starlib_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// With Options.Files (a checkpoint's scripts), load() reads those files
// only: a file that exists on disk but is not stored is refused, and a
// stored file is read from the checkpoint even when the disk copy differs.
func TestLoadReadsOnlyStoredFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"main.star":  "load('lib.star', 'v')\nload('other.star', 'w')\n",
		"lib.star":   "v = 'disk'\n",
		"other.star": "w = 1\n",
	})
	main := dir + "/main.star"
	src, _ := os.ReadFile(main)
	files := map[string][]byte{main: src, dir + "/lib.star": []byte("v = 'stored'\nprint(v)\n")}
	var out strings.Builder
	_, err := starlib.ExecFile(main, src, starlib.Options{Files: files, Stdout: &out, Library: all.Library()})
	if err == nil || !strings.Contains(err.Error(), "not stored in the checkpoint") {
		t.Fatalf("loading a file not stored: %v", err)
	}
	if out.String() != "stored\n" {
		t.Errorf("lib.star came from disk: printed %q", out.String())
	}
}

// config(...) declares tunables, applies overrides with type checks and
// records them; --print-config stops at it.
func TestConfigTunables(t *testing.T) {
	src := []byte("load('blocks.config', 'config')\ncfg = config(lr = 0.1, n = 2, name = 'a', dims = [1, 2])\nprint(cfg.lr, cfg.n, cfg.name, cfg.dims, config.default_seed)\n")
	var out strings.Builder
	if _, err := starlib.ExecFile("c.star", src, starlib.Options{Stdout: &out, Overrides: map[string]string{"lr": "1", "name": "b c", "dims": "(3,)"}, Library: all.Library()}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "1.0 2 b c [3] 1\n" {
		t.Errorf("printed %q", got)
	}
	ck := &starlib.PrintConfig{}
	out.Reset()
	_, err := starlib.ExecFile("c.star", src, starlib.Options{Stdout: &out, PrintConfig: ck, Overrides: map[string]string{"n": "5"}, Library: all.Library()})
	if !errors.Is(err, starlib.ErrConfigPrinted) || !ck.Printed || out.String() != "lr = 0.1\nn = 5  # --set\nname = \"a\"\ndims = [1, 2]\n" {
		t.Errorf("print-config: %v %q", err, out.String())
	}
	_, err = starlib.ExecFile("c.star", src, starlib.Options{Overrides: map[string]string{"n": "2.5"}, Library: all.Library()})
	if err == nil || !strings.Contains(err.Error(), "n is declared as 2 (an int), got a float; the tunables are: dims, lr, n, name") {
		t.Errorf("wrong type: %v", err)
	}
}
