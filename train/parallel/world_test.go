package parallel

import (
	"strings"
	"testing"
)

// The environments of the launchers (as Open MPI 4.1's mpirun, SLURM's
// srun with and without --mpi=pmix or pmi2, and an sbatch script set
// them) and what World makes of them.
func TestDetectLauncher(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		mpi       bool
		size      int
		worldSize int    // MPI's, for the check after MPI_Init (0: before)
		err       string // "" when the start is accepted
	}{
		{name: "alone", env: map[string]string{}},
		{name: "mpirun", env: map[string]string{"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "2", "PMIX_RANK": "2"}, mpi: true, size: 4, worldSize: 4},
		{name: "srun --mpi=pmix", env: map[string]string{"PMIX_RANK": "1", "SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "8", "SLURM_NTASKS": "8"}, mpi: true, size: 8, worldSize: 8},
		{name: "srun --mpi=pmi2", env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "8", "SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "8"}, mpi: true, size: 8, worldSize: 8},
		{name: "srun --mpi=pmix, MPI alone", env: map[string]string{"PMIX_RANK": "1", "SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "8"}, mpi: true, size: 8, worldSize: 1,
			err: "the launcher started 8 processes (SLURM_STEP_NUM_TASKS=8) but MPI joined this one to a job of 1"},
		{name: "srun without MPI", env: map[string]string{"SLURM_PROCID": "3", "SLURM_STEP_NUM_TASKS": "4", "SLURM_NTASKS": "4"}, size: 4,
			err: "srun started this process as one of 4 tasks (SLURM_STEP_NUM_TASKS=4), but no MPI launcher information reached it"},
		{name: "srun, one task", env: map[string]string{"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "1"}, size: 1},
		// An sbatch script's own environment: the allocation's task
		// count, no step: one process, as asked.
		{name: "sbatch script", env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_JOB_ID": "7"}},
	}
	for _, c := range cases {
		l := detect(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if l.mpi != c.mpi || l.size != c.size {
			t.Errorf("%s: mpi %v size %d, want %v %d", c.name, l.mpi, l.size, c.mpi, c.size)
		}
		err := l.check(0)
		if err == nil && l.mpi {
			err = l.check(c.worldSize)
		}
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.err)
		}
	}
}
