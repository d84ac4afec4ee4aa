package parallel

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Comm is a group of processes that run the same program (MPI's
// communicator). The collectives must be called by every member in the
// same order; they block until all members have called them, or until a
// timeout, which is an error (a member died or is stuck).
type Comm interface {
	// Rank is this member's index, 0 <= Rank < Size.
	Rank() int
	// Size is the number of members.
	Size() int
	// Allgather sends send to every member; recv, Size()*len(send) bytes,
	// receives member i's bytes at i*len(send).
	Allgather(send, recv []byte) error
	// Alltoall sends the i-th of Size() equal chunks of send to member i;
	// recv (as long as send) receives member i's chunk at chunk i.
	Alltoall(send, recv []byte) error
	// Bcast copies root's buf into every member's buf (same length).
	Bcast(buf []byte, root int) error
	// AllreduceMax sets each member's v to the elementwise maximum of all
	// members' v (same length).
	AllreduceMax(v []int64) error
	// Abort stops every member of the job (MPI_Abort); it does not return
	// for MPI. Code is the exit status.
	Abort(code int)
}

// ErrTimeout is returned by a collective that did not complete within its
// timeout.
var ErrTimeout = errors.New("parallel: a collective did not complete in time (another process died or is stuck)")

// Single is the group of one process: collectives copy.
type Single struct{}

// Rank is 0.
func (Single) Rank() int { return 0 }

// Size is 1.
func (Single) Size() int { return 1 }

// Allgather copies send to recv.
func (Single) Allgather(send, recv []byte) error { copy(recv, send); return nil }

// Alltoall copies send to recv.
func (Single) Alltoall(send, recv []byte) error { copy(recv, send); return nil }

// Bcast does nothing.
func (Single) Bcast([]byte, int) error { return nil }

// AllreduceMax does nothing.
func (Single) AllreduceMax([]int64) error { return nil }

// Abort does nothing (the caller returns its error).
func (Single) Abort(int) {}

// localGroup is the shared state of an in-process group.
type localGroup struct {
	n       int
	timeout time.Duration

	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	gen     int
	slots   [][]byte
	ints    [][]int64
	aborted bool
}

type localComm struct {
	g    *localGroup
	rank int
}

// NewLocalGroup returns n members of one in-process group, to be used by
// n goroutines as if they were n processes (tests of the algorithms that
// run over MPI). A collective that waits longer than timeout returns
// ErrTimeout; Abort makes every waiting and later collective fail.
func NewLocalGroup(n int, timeout time.Duration) []Comm {
	g := &localGroup{n: n, timeout: timeout, slots: make([][]byte, n), ints: make([][]int64, n)}
	g.cond = sync.NewCond(&g.mu)
	cs := make([]Comm, n)
	for i := range cs {
		cs[i] = &localComm{g: g, rank: i}
	}
	return cs
}

func (c *localComm) Rank() int { return c.rank }
func (c *localComm) Size() int { return c.g.n }

// barrier waits until all members have arrived; under the lock.
func (g *localGroup) barrier() error {
	if g.aborted {
		return errors.New("parallel: the job was aborted")
	}
	gen := g.gen
	g.arrived++
	if g.arrived == g.n {
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
		return nil
	}
	deadline := time.Now().Add(g.timeout)
	timer := time.AfterFunc(g.timeout, func() { g.mu.Lock(); g.cond.Broadcast(); g.mu.Unlock() })
	defer timer.Stop()
	for gen == g.gen {
		if g.aborted {
			return errors.New("parallel: the job was aborted")
		}
		if time.Now().After(deadline) {
			return ErrTimeout
		}
		g.cond.Wait()
	}
	return nil
}

// exchange deposits send, waits for all, runs read, waits again (so no
// slot is overwritten while another member reads it).
func (c *localComm) exchange(send []byte, ints []int64, read func()) error {
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.slots[c.rank], g.ints[c.rank] = send, ints
	if err := g.barrier(); err != nil {
		return err
	}
	read()
	return g.barrier()
}

func (c *localComm) Allgather(send, recv []byte) error {
	if len(recv) != len(send)*c.g.n {
		return fmt.Errorf("parallel: Allgather: recv has %d bytes, want %d", len(recv), len(send)*c.g.n)
	}
	return c.exchange(send, nil, func() {
		for i, s := range c.g.slots {
			copy(recv[i*len(send):], s)
		}
	})
}

func (c *localComm) Alltoall(send, recv []byte) error {
	n := c.g.n
	if len(send)%n != 0 || len(recv) != len(send) {
		return fmt.Errorf("parallel: Alltoall: %d bytes to send, %d to receive, in %d chunks", len(send), len(recv), n)
	}
	k := len(send) / n
	return c.exchange(send, nil, func() {
		for i, s := range c.g.slots {
			copy(recv[i*k:(i+1)*k], s[c.rank*k:(c.rank+1)*k])
		}
	})
}

func (c *localComm) Bcast(buf []byte, root int) error {
	var mine []byte
	if c.rank == root {
		mine = buf
	}
	return c.exchange(mine, nil, func() {
		if c.rank != root {
			copy(buf, c.g.slots[root])
		}
	})
}

func (c *localComm) AllreduceMax(v []int64) error {
	out := make([]int64, len(v))
	err := c.exchange(nil, v, func() {
		copy(out, c.g.ints[0])
		for _, w := range c.g.ints[1:] {
			for i := range out {
				out[i] = max(out[i], w[i])
			}
		}
	})
	if err == nil {
		copy(v, out)
	}
	return err
}

func (c *localComm) Abort(int) {
	c.g.mu.Lock()
	c.g.aborted = true
	c.g.cond.Broadcast()
	c.g.mu.Unlock()
}
