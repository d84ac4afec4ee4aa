package core

// The matrix products run on OpenBLAS through gonum's cgo binding; the link
// flag lives here so that a plain `go build` works once Debian's
// libopenblas-dev is installed.

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

var blasImpl netlib.Implementation

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
