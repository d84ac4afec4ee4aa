package blocks

import (
	"os"
	"testing"
)

// TestMain builds the package's modules first: that fills its class
// tables, which the tests read.
func TestMain(m *testing.M) {
	modules()
	os.Exit(m.Run())
}
