//go:build !cgo || nompi

package parallel

import (
	"errors"
	"time"
)

// Available reports whether this binary has the MPI binding.
const Available = false

type mpiComm struct{ Single }

func initWorld(time.Duration) (*mpiComm, error) {
	return nil, errors.New("parallel: this binary was built without MPI (cgo disabled or the nompi tag); build it with cgo and Open MPI (libopenmpi-dev)")
}

func (c *mpiComm) Stats() Stats    { return Stats{} }
func (c *mpiComm) finalize() error { return nil }
