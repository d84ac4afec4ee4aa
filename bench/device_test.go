package bench

import (
	"fmt"
	"os"
	"testing"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/core/exec/cpu"
)

// benchDevice is where the benchmarks' training steps run: the device
// BLOCKS_DEVICE names, read by TestMain (the CPU when unset).
var benchDevice device.Device

// TestMain runs the benchmarks on the device BLOCKS_DEVICE names (the CPU
// when unset; benchDevice): make gpu-check times the CUDA build's steps
// with BLOCKS_DEVICE=cuda. The CPU settings take the environment's overrides,
// as blocks-repl does (BLOCKS_CPU_WORKERS, BLOCKS_NOFUSE=1, ...).
func TestMain(m *testing.M) {
	if err := cpu.ConfigureFromEnv(os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if s := os.Getenv("BLOCKS_DEVICE"); s != "" {
		d, err := device.Parse(s)
		if err == nil {
			err = device.Check(d)
		}
		benchDevice = d
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: BLOCKS_DEVICE:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
