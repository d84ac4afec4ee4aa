package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDistributedDataMismatch: two processes whose data paths hold
// different MNIST files (the first 400 training images altered in one)
// stop at the first batch with an error that says so, although each reads
// only its own microbatches.
func TestDistributedDataMismatch(t *testing.T) {
	needMPI(t)
	mnist := mnistData(t)
	other := t.TempDir()
	tw := time.Now()
	for _, f := range []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"} {
		b, err := os.ReadFile(filepath.Join(mnist, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "train-images-idx3-ubyte.gz" {
			b = alterImages(t, b, 400)
		}
		if err := os.WriteFile(filepath.Join(other, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("data written in %v", time.Since(tw))
	mpirun, _ := exec.LookPath("mpirun")
	script, _ := filepath.Abs("../../scripts/mnist_dropout.star")
	args := []string{"--oversubscribe"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	for i, path := range []string{mnist, other} {
		if i > 0 {
			args = append(args, ":")
		}
		args = append(args, "-np", "1", "-x", "FUEL_DATA_PATH="+path, "-x", "FUEL_FLOATX=float32", binary(t), "run", "--microbatches", "2",
			"--set", "dataset=mnist", "--set", "examples=400", "--set", "hidden=16", "--set", "epochs=1", script)
	}
	cmd := exec.Command(mpirun, args...)
	cmd.Dir = t.TempDir()
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the job ran:\n%s", out)
	}
	if !strings.Contains(string(out), "has other first batch than process") || !strings.Contains(string(out), "same data (same dataset files, same FUEL_DATA_PATH)") {
		t.Fatalf("no clear error:\n%s", out)
	}
	t.Logf("job stopped after %v", time.Since(t0))
	if d := time.Since(t0); d > 2*time.Minute {
		t.Fatalf("the job took %v to stop", d)
	}
}

// alterImages changes one pixel of each of the first n images of an
// gzipped IDX image file.
func alterImages(t *testing.T, gz []byte, n int) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		raw[16+i*784+14*28+14] ^= 0x5a
	}
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
