package blocks

import (
	"os"
	"testing"
)

// TestMain builds the package's modules first: that fills its tables
// (brick classes, attribute hooks), which the tests read.
func TestMain(m *testing.M) {
	modules()
	os.Exit(m.Run())
}
