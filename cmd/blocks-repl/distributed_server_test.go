package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDistributedServerPerProcess: each process of a 2-process job starts
// its own Fuel data server (blocks-repl fuel serve scripts/serve_mnist.star,
// ZeroMQ over loopback, its own port) and trains
// scripts/train_from_server.star from it with 2 microbatches: the same
// parameters and log as one process trained from one server.
func TestDistributedServerPerProcess(t *testing.T) {
	needMPI(t)
	src, err := os.ReadFile("../../scripts/train_from_server.star")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "        Printing(),\n", "        Printing(),\n        Checkpoint(\"ck.tar\"),\n", 1)
	s = strings.Replace(s, "\nmain_loop = MainLoop(", "\nload(\"blocks.extensions.saveload\", \"Checkpoint\")\nmain_loop = MainLoop(", 1)
	if !strings.Contains(s, "Checkpoint(\"ck.tar\")") {
		t.Fatal("the script changed: update the test's edit")
	}
	train := writeScript(t, "train.star", s)
	serve, _ := filepath.Abs("../../scripts/serve_mnist.star")
	// Each process: its server in the background on the port of its
	// rank, training from it, then the server stopped.
	const perProcess = `P=$(eval echo \$PORT${OMPI_COMM_WORLD_RANK:-0})
"$BIN" fuel serve --port "$P" "$SERVE" >"server$P.log" 2>&1 &
S=$!
"$BIN" run --microbatches 2 --set epochs=1 --set hidden=32 --set port="$P" "$TRAIN"
rc=$?
kill -INT $S; wait $S
exit $rc`
	// The same ports for both runs: the port is a setting of the
	// script, recorded in the log.
	p0, p1 := freePort(t), freePort(t)
	for p1 == p0 {
		p1 = freePort(t)
	}
	ports := []string{fmt.Sprintf("PORT0=%d", p0), fmt.Sprintf("PORT1=%d", p1)}
	env := func(dir string) []string {
		return append(os.Environ(), "BIN="+binary(t), "SERVE="+serve, "TRAIN="+train, ports[0], ports[1], "FUEL_FLOATX=float32")
	}
	one := newDir(t, "one")
	cmd := exec.Command("sh", "-c", perProcess)
	cmd.Dir, cmd.Env = one, env(one)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("one process: %v\n%s", err, out)
	}
	two := newDir(t, "two")
	mpirun, _ := exec.LookPath("mpirun")
	args := []string{"-np", "2", "--oversubscribe"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	cmd = exec.Command(mpirun, append(args, "sh", "-c", perProcess)...)
	cmd.Dir, cmd.Env = two, env(two)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("2 processes: %v\n%s", err, out)
	}
	if strings.Count(string(out), "TRAINING HAS BEEN FINISHED") != 1 {
		t.Fatalf("2 processes: output\n%s", out)
	}
	logs, _ := filepath.Glob(filepath.Join(two, "server*.log"))
	if len(logs) != 2 {
		t.Fatalf("%d server logs, want one per process", len(logs))
	}
	for _, l := range logs {
		if b, _ := os.ReadFile(l); !strings.Contains(string(b), "fuel server: serving features, targets on tcp://127.0.0.1:") {
			t.Fatalf("%s: %s", l, b)
		}
	}
	sameState(t, "2 processes, a server each", readCkpt(t, filepath.Join(one, "ck.tar")), readCkpt(t, filepath.Join(two, "ck.tar")), true)
}
