package dashboard

import (
	"reflect"
	"testing"
)

func TestConfigItems(t *testing.T) {
	got := configItems(`{"epochs": 3, "dims": [200, 100], "name": "a, \"b\"", "t": (1, 2)}`, map[string]string{"epochs": "3", "other": "x"})
	want := []ConfigItem{{"epochs", "3", "3"}, {"dims", "[200, 100]", ""}, {"name", `"a, \"b\""`, ""}, {"t", "(1, 2)", ""}, {"other", "x", "x"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configItems:\n got %q\nwant %q", got, want)
	}
	if got := splitDict(`{"a": [1, 2}`); got != nil {
		t.Errorf("unbalanced literal: %q", got)
	}
	if got := splitDict(`not a dict`); got != nil {
		t.Errorf("not a dict: %q", got)
	}
}
