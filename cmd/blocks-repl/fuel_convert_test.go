package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// callMain runs Main in process and returns the status, stdout and stderr.
func callMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestFuelConvertAndInfo(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(in, "iris.data"), []byte("5.1,3.5,1.4,0.2,Iris-setosa\n7.0,3.2,4.7,1.4,Iris-versicolor\n"), 0o644)
	code, stdout, stderr := callMain("fuel", "convert", "iris", "-d", in, "-o", out)
	if code != 0 {
		t.Fatalf("convert: %d %s", code, stderr)
	}
	path := filepath.Join(out, "iris.hdf5")
	if !strings.Contains(stdout, path) {
		t.Errorf("convert said %q", stdout)
	}
	code, stdout, stderr = callMain("fuel", "info", path)
	if code != 0 {
		t.Fatalf("info: %d %s", code, stderr)
	}
	for _, want := range []string{
		"fuel_convert_command    blocks-repl fuel convert iris -d " + in + " -o " + out,
		"h5py_interface_version  0.3",
		"features  float32  (2, 4)  batch, feature",
		"targets   uint8    (2, 1)  batch, index",
		"all    features  2         [0, 2)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("info output lacks %q:\n%s", want, stdout)
		}
	}
	// Errors name what is wrong and exit non-zero.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fuel", "convert", "mnist", "-d", in, "-o", out}, "train-images-idx3-ubyte"},
		{[]string{"fuel", "convert", "nope"}, "unknown dataset"},
		{[]string{"fuel", "convert"}, "usage"},
		{[]string{"fuel", "info", filepath.Join(in, "iris.data")}, "not an HDF5 file"},
		{[]string{"fuel", "info", filepath.Join(in, "missing.hdf5")}, "does not exist"},
	} {
		code, _, stderr := callMain(c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: status %d, stderr %q, want it to say %q", c.args, code, stderr, c.want)
		}
	}
}

func TestFuelConvertPositionalArgument(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fuel", "convert", "svhn"}, "usage"},
		{[]string{"fuel", "convert", "svhn", "x"}, "not a number"},
		{[]string{"fuel", "convert", "svhn", "1", "-d", t.TempDir(), "-o", t.TempDir()}, "train.tar.gz"},
		{[]string{"fuel", "convert", "celeba", "32", "-o", t.TempDir()}, "'aligned_cropped' or '64'"},
		{[]string{"fuel", "convert", "ilsvrc2010", "-d", t.TempDir(), "-o", t.TempDir()}, "ILSVRC2010_devkit-1.0.tar.gz"},
		{[]string{"fuel", "convert", "youtube_audio", "-o", t.TempDir()}, "not implemented"},
		{[]string{"fuel", "convert", "caltech101_silhouettes", "20", "-o", t.TempDir()}, "size must be 16 or 28"},
		{[]string{"fuel", "convert", "svhn", "2", "-d", t.TempDir(), "-o", t.TempDir()}, "train_32x32.mat"},
	} {
		code, _, stderr := callMain(c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: status %d, stderr %q, want it to say %q", c.args, code, stderr, c.want)
		}
	}
}

// TestFuelConvertILSVRC: fuel convert ilsvrc2010 and ilsvrc2012 as whole
// commands, on the small stand-in inputs of make_standin_devkit.py
// --small (fuel/converters' TestConvertILSVRC checks the contents against
// h5py); fuel info shows the layout; --shuffle-seed is taken and checked.
func TestFuelConvertILSVRC(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import scipy.io, PIL, numpy").Run() != nil {
		t.Skip("Debian's python3-scipy and python3-pil write the stand-in inputs (not installed)")
	}
	in := t.TempDir()
	if out, err := exec.Command("/usr/bin/python3", "../../fuel/converters/testdata/make_standin_devkit.py", "--small", in).CombinedOutput(); err != nil {
		t.Fatalf("make_standin_devkit.py: %v\n%s", err, out)
	}
	for _, year := range []string{"2010", "2012"} {
		out := t.TempDir()
		code, stdout, stderr := callMain("fuel", "convert", "ilsvrc"+year, "-d", filepath.Join(in, year), "-o", out, "--shuffle-seed", "5")
		path := filepath.Join(out, "ilsvrc"+year+".hdf5")
		if code != 0 || !strings.Contains(stdout, path) {
			t.Fatalf("convert ilsvrc%s: %d %s %s", year, code, stdout, stderr)
		}
		code, stdout, stderr = callMain("fuel", "info", path)
		if code != 0 {
			t.Fatalf("info: %d %s", code, stderr)
		}
		wantTest := `test\s+targets\s+5\s+\[25, 30\)`
		if year == "2012" { // the test labels are not public
			wantTest = `test\s+targets\s+-\s+not available`
		}
		if !regexp.MustCompile(wantTest).MatchString(stdout) {
			t.Errorf("ilsvrc%s: info output lacks %s:\n%s", year, wantTest, stdout)
		}
		for _, want := range []string{"--shuffle-seed 5", "filenames", "train  encoded_images  18        [0, 18)"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("ilsvrc%s: info output lacks %q:\n%s", year, want, stdout)
			}
		}
	}
	code, _, stderr := callMain("fuel", "convert", "ilsvrc2012", "-d", filepath.Join(in, "2012"), "-o", t.TempDir(), "--shuffle-seed", "-3")
	if code == 0 || !strings.Contains(stderr, "shuffle_seed -3") {
		t.Errorf("a negative seed: %d %q", code, stderr)
	}
}
