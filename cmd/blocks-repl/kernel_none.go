//go:build !cgo

package main

import (
	"fmt"
	"io"
)

// kernelCommand refuses: the pure-Go build has no ZeroMQ (docs/backends.md).
func kernelCommand(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "blocks-repl kernel: this is the pure-Go build (CGO_ENABLED=0), which has no ZeroMQ: the Jupyter kernel needs the default build (make build)")
	return 1
}
