package stdlib

import (
	"slices"
	"strings"
	"testing"
)

func TestFilesAndSource(t *testing.T) {
	if fs := Files(); !slices.Contains(fs, "stdlib/regularization.star") {
		t.Fatalf("files %v", fs)
	}
	src, err := Source("stdlib/regularization.star")
	if err != nil || !strings.Contains(string(src), "def l2_penalty(") {
		t.Fatalf("source: %v", err)
	}
	if _, err := Source("stdlib/none.star"); err == nil || !strings.Contains(err.Error(), "stdlib/regularization.star") {
		t.Errorf("missing file error: %v", err)
	}
}
