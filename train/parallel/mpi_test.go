package parallel

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// MPIRun returns the mpirun command line that starts n processes of
// argv on this host (oversubscribed, as root where root), or an error
// when Open MPI's mpirun is not installed or this binary has no MPI.
func mpirunArgs(n int, argv ...string) ([]string, error) {
	if !Available {
		return nil, errors.New("built without MPI")
	}
	p, err := exec.LookPath("mpirun")
	if err != nil {
		return nil, err
	}
	args := []string{p, "-np", fmt.Sprint(n), "--oversubscribe"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return append(args, argv...), nil
}

// TestMPI runs this test binary under mpirun on 1, 2 and 4 processes;
// each process reduces the same 8 vectors (its block of them) and checks
// the bits against one process's sum, then the collectives are checked.
func TestMPI(t *testing.T) {
	if os.Getenv("BLOCKS_TEST_MPI_CHILD") == "1" {
		if err := mpiChild(); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		return
	}
	if !Available {
		t.Skip("built without MPI (the rest of the package is tested without it)")
	}
	for _, n := range []int{1, 2, 4} {
		args, err := mpirunArgs(n, os.Args[0], "-test.run", "^TestMPI$", "-test.count=1")
		if err != nil {
			t.Skipf("no MPI launcher: %v", err)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "BLOCKS_TEST_MPI_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%d processes: %v\n%s", n, err, out)
		}
		if got := strings.Count(string(out), "MPI OK"); got != n {
			t.Fatalf("%d processes: %d reported OK\n%s", n, got, out)
		}
	}
}

func mpiChild() error {
	if !Launched() {
		return errors.New("not launched by mpirun")
	}
	c, err := World()
	if err != nil {
		return err
	}
	defer Finalize(c)
	n, r := c.Size(), c.Rank()
	vs := vectors(8, 1001, 8008)
	want := make([]float32, 1001)
	if err := Reduce(Single{}, Plan{K: 8, N: 1, Hi: 8}, clone2(vs), want); err != nil {
		return err
	}
	plan, err := NewPlan(8, n, r)
	if err != nil {
		return err
	}
	got := make([]float32, 1001)
	if err := Reduce(c, plan, clone2(vs[plan.Lo:plan.Hi]), got); err != nil {
		return err
	}
	if !sameBits(got, want) {
		return fmt.Errorf("rank %d of %d: the sum differs from one process's", r, n)
	}
	buf := []byte{0, 0, 0}
	if r == 0 {
		buf = []byte{1, 2, 3}
	}
	if err := c.Bcast(buf, 0); err != nil || buf[2] != 3 {
		return fmt.Errorf("Bcast: %v %v", buf, err)
	}
	v := []int64{int64(r), -int64(r)}
	if err := c.AllreduceMax(v); err != nil || v[0] != int64(n-1) || v[1] != 0 {
		return fmt.Errorf("AllreduceMax: %v %v", v, err)
	}
	all := make([]byte, n)
	if err := c.Allgather([]byte{byte(r)}, all); err != nil {
		return err
	}
	for i := range n {
		if all[i] != byte(i) {
			return fmt.Errorf("Allgather: %v", all)
		}
	}
	st := CommStats(c)
	if n > 1 && st.BytesSent == 0 {
		return fmt.Errorf("no bytes counted: %+v", st)
	}
	fmt.Printf("MPI OK rank %d of %d (%d bytes sent in %d collectives, %v)\n", r, n, st.BytesSent, st.Collectives, st.Time.Round(time.Microsecond))
	return nil
}
