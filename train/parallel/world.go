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
func Launched() bool { return detect(os.LookupEnv).mpi }

// CheckLaunch refuses a start in which the launcher meant this process to
// be one of several but gave it no way to join them: srun's tasks without
// MPI support (no PMIx or PMI variables) would each train alone, all
// writing the same files. World makes the same check.
func CheckLaunch() error { return detect(os.LookupEnv).check(0) }

// launch is what a process's environment says about how it was started.
type launch struct {
	// mpi: an MPI launcher started it (Open MPI's mpirun sets
	// OMPI_COMM_WORLD_SIZE; a PMIx server such as srun --mpi=pmix sets
	// PMIX_RANK; a PMI-2 one, srun --mpi=pmi2 or MPICH's Hydra, PMI_RANK).
	mpi bool
	// size is the number of processes the launcher says the job has
	// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, or srun's SLURM_STEP_NUM_TASKS),
	// 0 when it does not say.
	size int
	// by names the variable size came from.
	by string
	// slurm: srun started the process as one task of a step
	// (SLURM_PROCID set).
	slurm bool
}

// detect reads how the process was started from its environment.
func detect(getenv func(string) (string, bool)) launch {
	var l launch
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"} {
		if _, ok := getenv(k); ok {
			l.mpi = true
		}
	}
	_, l.slurm = getenv("SLURM_PROCID")
	sizes := []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}
	if l.slurm {
		sizes = append(sizes, "SLURM_STEP_NUM_TASKS")
	}
	for _, k := range sizes {
		if v, ok := getenv(k); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				l.size, l.by = n, k
				break
			}
		}
	}
	return l
}

// check says what is wrong with a start: srun's tasks that got no MPI
// launcher information (SLURM without --mpi=pmix, or an Open MPI built
// without PMIx support) would each train alone, all writing the same
// files; and a job whose MPI world is not the size the launcher said.
// worldSize is MPI's (0 when MPI was not initialized).
func (l launch) check(worldSize int) error {
	switch {
	case !l.mpi && l.slurm && l.size > 1:
		return fmt.Errorf("parallel: srun started this process as one of %d tasks (%s=%d), but no MPI launcher information reached it (no PMIX_RANK or PMI_RANK): "+
			"each task would train alone; start it with srun --mpi=pmix (or set MpiDefault=pmix in slurm.conf), or run one task", l.size, l.by, l.size)
	case l.mpi && worldSize > 0 && l.size > 0 && worldSize != l.size:
		return fmt.Errorf("parallel: the launcher started %d processes (%s=%d) but MPI joined this one to a job of %d: "+
			"MPI could not reach the launcher (under srun, use --mpi=pmix with an Open MPI built with PMIx, as Debian's is)", l.size, l.by, l.size, worldSize)
	}
	return nil
}

// World returns the job's processes: MPI's world when Launched, Single
// otherwise. It initializes MPI the first time; call Finalize before the
// process exits. It refuses a start in which the processes could not form
// the job the launcher meant (see launch.check).
func World() (Comm, error) {
	l := detect(os.LookupEnv)
	if err := l.check(0); err != nil {
		return nil, err
	}
	if !l.mpi {
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
	if err := l.check(c.Size()); err != nil {
		c.finalize()
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
