package parallel

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Stats count what a process's collectives did.
type Stats struct {
	// Collectives is the number of collective calls.
	Collectives int64
	// BytesSent is the number of bytes this process sent to others.
	BytesSent int64
	// Time is the time spent in collectives (waiting for the others
	// included).
	Time time.Duration
}

// DefaultTimeout is how long a collective waits for the other processes
// before the job is stopped: long enough for rank 0 to write a
// checkpoint while the others wait, short enough that a stuck process
// does not hold a cluster's nodes for long. BLOCKS_MPI_TIMEOUT (seconds)
// overrides it. A process that dies is noticed sooner: mpirun stops the
// job when one of its processes exits abnormally.
const DefaultTimeout = 120 * time.Second

// Launched reports whether this process was started by an MPI launcher
// (mpirun, mpiexec, or SLURM's srun with PMIx or PMI-2): then World
// initializes MPI. Otherwise the process is alone and MPI is never
// touched.
func Launched() bool {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"} {
		if _, ok := os.LookupEnv(k); ok {
			return true
		}
	}
	return false
}

// World returns the job's processes: MPI's world when Launched, Single
// otherwise. It initializes MPI the first time; call Finalize before the
// process exits.
func World() (Comm, error) {
	if !Launched() {
		return Single{}, nil
	}
	timeout := DefaultTimeout
	if s := os.Getenv("BLOCKS_MPI_TIMEOUT"); s != "" {
		sec, err := strconv.ParseFloat(s, 64)
		if err != nil || sec <= 0 {
			return nil, fmt.Errorf("parallel: BLOCKS_MPI_TIMEOUT must be a positive number of seconds, got %q", s)
		}
		timeout = time.Duration(sec * float64(time.Second))
	}
	c, err := initWorld(timeout)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Finalize ends MPI when World initialized it (MPI_Finalize); otherwise
// it does nothing.
func Finalize(c Comm) error {
	if m, ok := c.(*mpiComm); ok && m != nil {
		return m.finalize()
	}
	return nil
}

// CommStats returns the collectives' statistics of an MPI Comm (zero for
// others).
func CommStats(c Comm) Stats {
	if m, ok := c.(*mpiComm); ok && m != nil {
		return m.Stats()
	}
	return Stats{}
}
