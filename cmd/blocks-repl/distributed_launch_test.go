package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDistributedLaunchChecks: starts in which the processes cannot form
// the job the launcher meant are refused with an error that says what to
// do. SLURM is not installed here, so srun's environment is imitated:
//   - srun -n 4 without MPI support (no PMIx or PMI variables, only
//     SLURM_PROCID and SLURM_STEP_NUM_TASKS): refused before MPI starts;
//   - a process of a 2-process mpirun job stripped of Open MPI's own
//     variables, keeping PMIx's and given srun's: Open MPI then starts it
//     as a job of one (its PMIx connection unused), which World notices
//     through real MPI_Init.
func TestDistributedLaunchChecks(t *testing.T) {
	needMPI(t)
	script, _ := filepath.Abs("../../scripts/demo.star")
	cmd := exec.Command(binary(t), "run", "--set", "epochs=1", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SLURM_PROCID=2", "SLURM_STEP_NUM_TASKS=4", "SLURM_NTASKS=4")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "srun started this process as one of 4 tasks") || !strings.Contains(string(out), "srun --mpi=pmix") {
		t.Fatalf("srun without MPI: %v\n%s", err, out)
	}
	const strip = `for v in $(env | grep '^OMPI_' | cut -d= -f1); do unset $v; done
SLURM_PROCID=$PMIX_RANK SLURM_STEP_NUM_TASKS=2 "$@"
echo "process exit status $?"`
	mpirun, _ := exec.LookPath("mpirun")
	// Each process is to report its own refusal: Open MPI must not abort
	// the job when the first one exits with an error, which under load
	// came before the second had printed its own. mpirun then exits 0;
	// each process's status is echoed.
	args := []string{"-np", "2", "--oversubscribe", "--mca", "orte_abort_on_non_zero_status", "0"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	args = append(args, "sh", "-c", strip, "sh", binary(t), "run", "--set", "epochs=1", script)
	cmd = exec.Command(mpirun, args...)
	cmd.Dir = t.TempDir()
	out, err = cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "the launcher started 2 processes (SLURM_STEP_NUM_TASKS=2) but MPI joined this one to a job of 1") != 2 ||
		strings.Count(string(out), "process exit status 1") != 2 {
		t.Fatalf("MPI alone under srun's variables: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "TRAINING HAS BEEN FINISHED") {
		t.Fatalf("a process trained:\n%s", out)
	}
}
