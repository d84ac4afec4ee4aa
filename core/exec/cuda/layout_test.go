package cuda

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// kernelSignatures reads the kernels and their parameters from
// kernels.cu.
func kernelSignatures(t *testing.T) map[string][]string {
	t.Helper()
	src, err := os.ReadFile("kernels/kernels.cu")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)
	sigs := map[string][]string{}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		var params []string
		for _, p := range strings.Split(m[2], ",") {
			params = append(params, strings.TrimSpace(p))
		}
		sigs[m[1]] = params
	}
	return sigs
}

// Every kernel the backend loads is defined, and every kernel defined is
// loaded.
func TestKernelsDefined(t *testing.T) {
	sigs := kernelSignatures(t)
	for _, k := range kernelNames {
		if _, ok := sigs[k]; !ok {
			t.Errorf("kernel %s is not in kernels.cu", k)
		}
	}
	for k := range sigs {
		if !slices.Contains(kernelNames, k) {
			t.Errorf("kernels.cu defines %s, which the backend does not load", k)
		}
	}
}

// gorgonia.org/cu's Launch copies every argument as 8 bytes: a kernel
// parameter of another size would read a wrong value on the GPU. Every
// parameter is a pointer, a long long or a double.
func TestKernelParametersAre8Bytes(t *testing.T) {
	ok := regexp.MustCompile(`^(const )?(float|double|long long|unsigned char) ?\*\s*\w+$|^(long long|double) \w+$`)
	for k, params := range kernelSignatures(t) {
		for _, p := range params {
			if !ok.MatchString(p) {
				t.Errorf("kernel %s: parameter %q is not a pointer, a long long or a double", k, p)
			}
		}
	}
}

// With Debian's CUDA toolkit installed (make build-cuda installs it),
// kernels.cu compiles to PTX with an entry for every kernel.
func TestKernelsCompileToPTX(t *testing.T) {
	t.Parallel()
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not installed (make build-cuda installs Debian's nvidia-cuda-toolkit)")
	}
	out := t.TempDir() + "/k.ptx"
	if b, err := exec.Command(nvcc, "-ptx", "-arch=compute_60", "-O3", "-fmad=false", "kernels/kernels.cu", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("nvcc: %v\n%s", err, b)
	}
	ptx, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kernelNames {
		if !regexp.MustCompile(`\.entry ` + k + `\(`).Match(ptx) {
			t.Errorf("the PTX has no entry %s", k)
		}
	}
}

func TestBroadcastStrides(t *testing.T) {
	for _, c := range []struct {
		in, out []int
		want    []int64
	}{
		{[]int{3, 4}, []int{3, 4}, []int64{4, 1}},
		{[]int{4}, []int{3, 4}, []int64{0, 1}},
		{[]int{3, 1}, []int{3, 4}, []int64{1, 0}},
		{[]int{1, 1}, []int{3, 4}, []int64{0, 0}},
		{[]int{2, 1, 5}, []int{7, 2, 6, 5}, []int64{0, 5, 0, 1}},
	} {
		got, ok := broadcastStrides(c.in, c.out)
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("broadcastStrides(%v, %v) = %v, %v; want %v", c.in, c.out, got, ok, c.want)
		}
	}
	if _, ok := broadcastStrides([]int{2, 3, 4}, []int{3, 4}); ok {
		t.Error("an input with more axes than the output was accepted")
	}
	if got := contiguousStrides([]int{2, 3, 4}); !slices.Equal(got, []int64{12, 4, 1}) {
		t.Errorf("contiguousStrides = %v", got)
	}
}

// With nvcc, the kernels also assemble for an H200 (sm_90, the GPU
// gpu-check targets): no register spills, and every kernel fits a block of
// 256 threads (the launches' size) in the 64K registers of a block.
func TestKernelsAssembleForSM90(t *testing.T) {
	t.Parallel()
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not installed (make build-cuda installs Debian's nvidia-cuda-toolkit)")
	}
	out, err := exec.Command(nvcc, "-cubin", "-arch=sm_90", "-O3", "-fmad=false", "-Xptxas", "-v",
		"kernels/kernels.cu", "-o", t.TempDir()+"/k.cubin").CombinedOutput()
	if err != nil {
		t.Fatalf("nvcc: %v\n%s", err, out)
	}
	fn := regexp.MustCompile(`Compiling entry function '(\w+)'|Function properties for (\w+)`)
	regs := regexp.MustCompile(`Used (\d+) registers`)
	spill := regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
	cur, seen := "", map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := fn.FindStringSubmatch(line); m != nil {
			cur = m[1] + m[2]
			continue
		}
		if m := spill.FindStringSubmatch(line); m != nil && (m[1] != "0" || m[2] != "0") {
			t.Errorf("kernel %s spills registers: %s", cur, strings.TrimSpace(line))
		}
		if m := regs.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n*256 > 65536 {
				t.Errorf("kernel %s uses %d registers: a block of 256 threads needs %d > 65536", cur, n, n*256)
			}
			seen[cur] = true
		}
	}
	for _, k := range kernelNames {
		if !seen[k] {
			t.Errorf("no register count reported for kernel %s", k)
		}
	}
}
