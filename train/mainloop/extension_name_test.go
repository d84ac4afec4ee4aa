package mainloop

import "testing"

type namedExt struct{ TrainingExtension }

type unnamedExt struct{ TrainingExtension }

func TestExtensionClassAfterRename(t *testing.T) {
	e := &namedExt{TrainingExtension{ExtensionName: "Printing"}}
	if got := ExtensionClass(e); got != "Printing" {
		t.Errorf("class before a rename: got %q, want Printing", got)
	}
	e.SetName("my_printing")
	e.SetName("again")
	if got, want := ExtensionName(e), "again"; got != want {
		t.Errorf("name: got %q, want %q", got, want)
	}
	if got := ExtensionClass(e); got != "Printing" {
		t.Errorf("class after two renames: got %q, want Printing", got)
	}
	u := &unnamedExt{}
	if got := ExtensionClass(u); got != "unnamedExt" {
		t.Errorf("class of an unnamed extension: got %q, want unnamedExt", got)
	}
	u.SetName("x")
	if got := ExtensionClass(u); got != "unnamedExt" {
		t.Errorf("class of a renamed unnamed extension: got %q, want unnamedExt", got)
	}
	if got := ExtensionName(u); got != "x" {
		t.Errorf("name: got %q, want x", got)
	}
}
