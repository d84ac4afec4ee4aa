//go:build cgo && !nompi

package parallel

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <time.h>

static int bk_init(int *provided) {
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int bk_rank_size(int *rank, int *size) {
	int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_size(MPI_COMM_WORLD, size);
}
// bk_wait polls req until it completes or timeout seconds pass (-1). It
// sleeps between polls after the first few, so that processes waiting on
// an oversubscribed machine leave the cores to those still computing.
static int bk_wait(MPI_Request *req, double timeout) {
	double t0 = MPI_Wtime();
	long polls = 0;
	for (;;) {
		int flag = 0;
		int rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS) return rc;
		if (flag) return MPI_SUCCESS;
		if (timeout > 0 && MPI_Wtime() - t0 > timeout) return -1;
		if (++polls > 64) {
			struct timespec ts = {0, polls > 20000 ? 1000000 : 20000};
			nanosleep(&ts, NULL);
		}
	}
}
static int bk_allgather(void *send, int n, void *recv, double timeout) {
	MPI_Request req;
	int rc = MPI_Iallgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : bk_wait(&req, timeout);
}
static int bk_alltoall(void *send, int n, void *recv, double timeout) {
	MPI_Request req;
	int rc = MPI_Ialltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : bk_wait(&req, timeout);
}
static int bk_bcast(void *buf, int n, int root, double timeout) {
	MPI_Request req;
	int rc = MPI_Ibcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : bk_wait(&req, timeout);
}
static int bk_allreduce_max(long long *v, int n, double timeout) {
	MPI_Request req;
	int rc = MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &req);
	return rc != MPI_SUCCESS ? rc : bk_wait(&req, timeout);
}
static void bk_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static int bk_finalize(void) { return MPI_Finalize(); }
static void bk_error_string(int rc, char *buf, int *len) { MPI_Error_string(rc, buf, len); }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"
	"unsafe"
)

// Available reports whether this binary has the MPI binding.
const Available = true

// mpiComm is MPI_COMM_WORLD. MPI is initialized with
// MPI_THREAD_SERIALIZED and every call is made under mu.
type mpiComm struct {
	mu         sync.Mutex
	rank, size int
	timeout    time.Duration
	stats      Stats
}

var (
	worldOnce sync.Once
	world     *mpiComm
	worldErr  error
)

// initWorld initializes MPI once for the process.
func initWorld(timeout time.Duration) (*mpiComm, error) {
	worldOnce.Do(func() {
		// Open MPI's own handlers for SIGSEGV, SIGBUS, ... would replace
		// Go's (which turn a nil dereference into a panic); single-copy
		// shared memory needs ptrace rights that containers often lack.
		setDefaultEnv("OMPI_MCA_opal_signal", "")
		setDefaultEnv("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
		var provided C.int
		if rc := C.bk_init(&provided); rc != C.MPI_SUCCESS {
			worldErr = fmt.Errorf("parallel: MPI_Init_thread: %s", errorString(rc))
			return
		}
		if provided < C.MPI_THREAD_SERIALIZED {
			worldErr = fmt.Errorf("parallel: this MPI library does not support MPI_THREAD_SERIALIZED (level %d)", int(provided))
			return
		}
		var r, s C.int
		if rc := C.bk_rank_size(&r, &s); rc != C.MPI_SUCCESS {
			worldErr = fmt.Errorf("parallel: MPI_Comm_rank: %s", errorString(rc))
			return
		}
		world = &mpiComm{rank: int(r), size: int(s), timeout: timeout}
	})
	return world, worldErr
}

func setDefaultEnv(k, v string) {
	if _, ok := os.LookupEnv(k); !ok {
		os.Setenv(k, v)
	}
}

func errorString(rc C.int) string {
	if rc == -1 {
		return ErrTimeout.Error()
	}
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	var n C.int
	C.bk_error_string(rc, &buf[0], &n)
	return C.GoStringN(&buf[0], n)
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

func (c *mpiComm) seconds() C.double {
	if c.timeout <= 0 {
		return 0
	}
	return C.double(c.timeout.Seconds())
}

func (c *mpiComm) result(op string, rc C.int, sent int, t0 time.Time) error {
	c.stats.Collectives++
	c.stats.BytesSent += int64(sent)
	c.stats.Time += time.Since(t0)
	if rc == C.MPI_SUCCESS {
		return nil
	}
	if rc == -1 {
		return fmt.Errorf("%s after %v: %w", op, c.timeout, ErrTimeout)
	}
	return fmt.Errorf("parallel: %s: %s", op, errorString(rc))
}

func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

func checkCount(n int) error {
	if n > math.MaxInt32 {
		return errors.New("parallel: a message of more than 2 GiB")
	}
	return nil
}

func (c *mpiComm) Allgather(send, recv []byte) error {
	if len(recv) != len(send)*c.size {
		return fmt.Errorf("parallel: Allgather: recv has %d bytes, want %d", len(recv), len(send)*c.size)
	}
	if err := checkCount(len(send)); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t0 := time.Now()
	rc := C.bk_allgather(ptr(send), C.int(len(send)), ptr(recv), c.seconds())
	return c.result("MPI_Allgather", rc, len(send)*(c.size-1), t0)
}

func (c *mpiComm) Alltoall(send, recv []byte) error {
	if len(send)%c.size != 0 || len(recv) != len(send) {
		return fmt.Errorf("parallel: Alltoall: %d bytes to send, %d to receive, in %d chunks", len(send), len(recv), c.size)
	}
	if err := checkCount(len(send)); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t0 := time.Now()
	n := len(send) / c.size
	rc := C.bk_alltoall(ptr(send), C.int(n), ptr(recv), c.seconds())
	return c.result("MPI_Alltoall", rc, n*(c.size-1), t0)
}

func (c *mpiComm) Bcast(buf []byte, root int) error {
	if err := checkCount(len(buf)); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t0 := time.Now()
	rc := C.bk_bcast(ptr(buf), C.int(len(buf)), C.int(root), c.seconds())
	sent := 0
	if c.rank == root {
		sent = len(buf) * (c.size - 1)
	}
	return c.result("MPI_Bcast", rc, sent, t0)
}

func (c *mpiComm) AllreduceMax(v []int64) error {
	if len(v) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t0 := time.Now()
	rc := C.bk_allreduce_max((*C.longlong)(unsafe.Pointer(&v[0])), C.int(len(v)), c.seconds())
	return c.result("MPI_Allreduce", rc, 8*len(v), t0)
}

// Abort is MPI_Abort on the world: mpirun stops every process.
func (c *mpiComm) Abort(code int) {
	C.bk_abort(C.int(code))
	os.Exit(code) // not reached
}

// Stats are the collectives' counts, bytes sent and time so far.
func (c *mpiComm) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// finalize is MPI_Finalize.
func (c *mpiComm) finalize() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc := C.bk_finalize(); rc != C.MPI_SUCCESS {
		return fmt.Errorf("parallel: MPI_Finalize: %s", errorString(rc))
	}
	return nil
}
