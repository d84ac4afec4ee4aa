package bench

import (
	"os"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// TestPrintProgram prints the training step's ops (BLOCKS_PRINT_PROGRAM=1).
func TestPrintProgram(t *testing.T) {
	if os.Getenv("BLOCKS_PRINT_PROGRAM") == "" {
		t.Skip("set BLOCKS_PRINT_PROGRAM=1")
	}
	gd, data := mlpStep(t, []int{784, 100, 10}, 256, 0.1)
	var args []*nd.Array
	for _, in := range gd.Inputs() {
		args = append(args, data[in.Name])
	}
	lines, err := gd.Function().Program(args)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		t.Log(l)
	}
}
