package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/blocks-go/blocks/starlib/run"
	"github.com/blocks-go/blocks/train/checkpoint"
	"github.com/blocks-go/blocks/train/parallel"
)

// Data-parallel runs (docs/distributed.md): run and resume take
// --np N (start N processes with mpirun) and --microbatches K; a
// process that mpirun or srun started joins the MPI job.

// parallelOptions are run's and resume's data-parallel options (their
// --help).
const parallelOptions = `  --np N             train on N processes: execs mpirun -np N --oversubscribe
                     with this command line (Open MPI; docs/distributed.md).
                     Under mpirun or srun, a process joins the job by itself.
  --microbatches K   cut each batch into K microbatches whose gradients are
                     summed in one fixed order: the same K gives the same bits
                     on any number of processes (default: the script's tunable
                     microbatches, else the number of processes; resume: the
                     checkpoint's).
`

// distFlags are --np and --microbatches.
type distFlags struct {
	np, microbatches int
}

// takeDistFlags removes --np N and --microbatches K (one or two dashes,
// with a space or =) from args.
func takeDistFlags(args []string) ([]string, distFlags, error) {
	var d distFlags
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || a == "--" {
			rest = append(rest, a)
			continue
		}
		n, v, hasValue := strings.Cut(name, "=")
		if n != "np" && n != "microbatches" {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return nil, d, fmt.Errorf("flag needs an argument: -%s", n)
			}
			i++
			v = args[i]
		}
		x, err := strconv.Atoi(v)
		if err != nil || x < 1 {
			return nil, d, fmt.Errorf("--%s must be a positive integer, got %q", n, v)
		}
		if n == "np" {
			if x > maxNP() {
				return nil, d, fmt.Errorf("--np %d: at most %d processes on one host (256, or its number of CPUs when larger); a job on several hosts starts blocks-repl under mpirun or srun itself", x, maxNP())
			}
			d.np = x
		} else {
			d.microbatches = x
		}
	}
	return rest, d, nil
}

// maxNP is the most processes --np starts: they all run on this host.
func maxNP() int { return max(256, runtime.NumCPU()) }

// mpirunCommand is the command line that runs this program's command
// cmd with args on n processes of this host. Every process is local, so
// they talk through shared memory only (btl self,vader: the TCP
// transport listened on every interface of the host, in every process),
// and mpirun's out-of-band channel uses the loopback network.
func mpirunCommand(n int, cmd string, args []string) ([]string, error) {
	if !parallel.Available {
		return nil, errors.New("--np: this blocks-repl was built without MPI (cgo off or the nompi tag)")
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		return nil, errors.New("--np: mpirun not found: install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev; make deps does it)")
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--np: %w", err)
	}
	argv := []string{mpirun, "-np", strconv.Itoa(n), "--oversubscribe",
		"--mca", "btl", "self,vader", "--mca", "oob_tcp_if_include", loopbackNet}
	if os.Geteuid() == 0 {
		argv = append(argv, "--allow-run-as-root")
	}
	argv = append(argv, exe, cmd)
	return append(argv, args...), nil
}

// loopbackNet is the loopback network, in the CIDR form Open MPI's
// *_if_include parameters take (an interface name differs by system).
const loopbackNet = "127.0.0.0/8"

// job is this process's place in a data-parallel run.
type job struct {
	comm parallel.Comm
	par  *run.Parallel
}

// distributed runs command cmd (run or resume, body) as one process of a
// data-parallel job: with --np and outside MPI it execs mpirun; inside
// MPI it joins the job, discards the output of the processes other than
// 0, and at the end finalizes MPI, or aborts the whole job when this
// process failed (so that no other process waits for it).
func distributed(cmd string, args []string, stdout, stderr io.Writer,
	body func(args []string, stdout, stderr io.Writer, j *job) int) (code int) {
	args, d, err := takeDistFlags(args)
	if err != nil {
		badUsage(stderr, cmd, err)
		return 2
	}
	if err := parallel.CheckLaunch(); err != nil {
		fmt.Fprintf(stderr, "blocks-repl %s: %v\n", cmd, err)
		return 1
	}
	if d.np > 0 && !parallel.Launched() {
		if d.microbatches > 0 {
			args = append([]string{"--microbatches", strconv.Itoa(d.microbatches)}, args...)
		}
		argv, err := mpirunCommand(d.np, cmd, args)
		if err != nil {
			fmt.Fprintf(stderr, "blocks-repl %s: %v\n", cmd, err)
			return 1
		}
		err = syscall.Exec(argv[0], argv, os.Environ())
		fmt.Fprintf(stderr, "blocks-repl %s: starting %s: %v\n", cmd, argv[0], err)
		return 1
	}
	if !parallel.Launched() {
		var j *job
		if d.microbatches > 0 || os.Getenv("BLOCKS_MPI_STATS") != "" {
			j = &job{comm: parallel.Single{}, par: &run.Parallel{Comm: parallel.Single{}, Microbatches: d.microbatches}}
		}
		code := body(args, stdout, stderr, j)
		j.printStats(stderr)
		return code
	}
	comm, err := parallel.World()
	if err != nil {
		fmt.Fprintf(stderr, "blocks-repl %s: %v\n", cmd, err)
		return 1
	}
	if d.np > 0 && d.np != comm.Size() {
		fmt.Fprintf(stderr, "blocks-repl %s: --np %d, but mpirun started %d processes\n", cmd, d.np, comm.Size())
		comm.Abort(2)
		return 2
	}
	j := &job{comm: comm, par: &run.Parallel{Comm: comm, Microbatches: d.microbatches}}
	if comm.Rank() != 0 {
		stdout = io.Discard
		stderr = &prefixWriter{w: stderr, prefix: fmt.Sprintf("[process %d of %d] ", comm.Rank(), comm.Size())}
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "blocks-repl: internal error: %v\n", r)
			code = 1
		}
		if code != 0 && comm.Size() > 1 {
			comm.Abort(code) // stops every process; does not return
		}
		j.printStats(stderr)
		if err := parallel.Finalize(comm); err != nil && code == 0 {
			fmt.Fprintf(stderr, "blocks-repl %s: %v\n", cmd, err)
			code = 1
		}
	}()
	return body(args, stdout, stderr, j)
}

// prefixWriter prefixes what a process other than 0 writes to stderr.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// parallelRun is the run's run.Parallel (nil for a plain run).
func (j *job) parallelRun() *run.Parallel {
	if j == nil {
		return nil
	}
	return j.par
}

// writer reports whether this process writes files (process 0).
func (j *job) writer() bool { return j == nil || j.comm.Rank() == 0 }

// storedParallel is the run.Parallel of a resumed or replayed run: the
// checkpoint's number of microbatches unless --microbatches says
// otherwise, on the job's processes (one when par is nil).
func storedParallel(c *checkpoint.Checkpoint, par *run.Parallel) *run.Parallel {
	if par == nil {
		if c.Run.Microbatches <= 1 {
			return nil
		}
		return &run.Parallel{Comm: parallel.Single{}, Microbatches: c.Run.Microbatches}
	}
	if par.Microbatches == 0 && c.Run.Microbatches > 0 {
		par.Microbatches = c.Run.Microbatches
	}
	return par
}

// printStats writes, when BLOCKS_MPI_STATS is set, this process's
// training steps, their mean time and its collectives (docs/distributed.md
// has the measurements made with it).
func (j *job) printStats(w io.Writer) {
	if j == nil || os.Getenv("BLOCKS_MPI_STATS") == "" {
		return
	}
	steps, d, read := j.par.Training()
	st := parallel.CommStats(j.comm)
	per := func(x float64) float64 {
		if steps == 0 {
			return 0
		}
		return x / float64(steps)
	}
	reads := "whole batches"
	if sh := j.par.Sharded(); len(sh) > 0 && !slices.Contains(sh, false) {
		reads = "its microbatches"
	}
	fmt.Fprintf(w, "mpi stats: process %d of %d: %d steps, %.3f ms/step (+ %.3f ms/step reading %s); %d collectives, %d bytes sent (%.0f per step), %.3f ms/step in collectives\n",
		j.comm.Rank(), j.comm.Size(), steps, per(float64(d.Microseconds())/1000), per(float64(read.Microseconds())/1000), reads,
		st.Collectives, st.BytesSent, per(float64(st.BytesSent)), per(float64(st.Time.Microseconds())/1000))
}
