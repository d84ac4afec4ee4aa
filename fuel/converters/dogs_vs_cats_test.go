package converters

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel"
	"github.com/blocks-go/blocks/fuel/h5"
)

// writeZip writes a zip archive of the named members (a name ending in
// "/" is a directory entry), each one's contents given by data.
func writeZip(t *testing.T, path string, names []string, data func(name string) []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(n, "/") {
			w.Write(data(n))
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// grayJPEG is a w x h JPEG of one grey level.
func grayJPEG(t *testing.T, w, h int, level uint8) []byte {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(im.Pix); i += 4 {
		im.Pix[i], im.Pix[i+1], im.Pix[i+2], im.Pix[i+3] = level, level, level, 255
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, im, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestConvertDogsVsCats checks the order Fuel gives the training images
// (numpy.random.RandomState(123522).shuffle of the member names, numpy run
// as the reference), the targets (dog 1, cat 0), the test images sorted
// by number, each image's shape, and the splits.
func TestConvertDogsVsCats(t *testing.T) {
	dir := t.TempDir()
	train := []string{"train/"}
	for _, n := range []string{"cat.0.jpg", "dog.0.jpg", "cat.1.jpg", "dog.1.jpg", "dog.2.jpg", "cat.2.jpg", "cat.3.jpg"} {
		train = append(train, "train/"+n)
	}
	// Each training image is i+1 pixels wide, so its shape tells which it is.
	width := map[string]int{}
	for i, n := range train[1:] {
		width[n] = i + 1
	}
	writeZip(t, filepath.Join(dir, dogsVsCatsTrain), train, func(n string) []byte { return grayJPEG(t, width[n], 2, 200) })
	test := []string{"test1/", "test1/10.jpg", "test1/2.jpg", "test1/1.jpg"}
	writeZip(t, filepath.Join(dir, dogsVsCatsTest), test, func(n string) []byte {
		k := map[string]int{"test1/10.jpg": 10, "test1/2.jpg": 2, "test1/1.jpg": 1}[n]
		return grayJPEG(t, 1, k, 100)
	})
	out, err := Convert("dogs_vs_cats", Options{Directory: dir, OutputDirectory: dir})
	if err != nil {
		t.Fatal(err)
	}
	names := train[1:]
	raw, err := exec.Command("/usr/bin/python3", "-c", `
import json, sys, numpy
names = json.loads(sys.argv[1])
numpy.random.RandomState(123522).shuffle(names)
print(json.dumps(names))`, mustJSON(t, names)).Output()
	if err != nil {
		t.Skipf("Debian's python3-numpy is the reference: %v", err)
	}
	var want []string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	d, err := h5.Open(out, []string{"train"}, h5.Options{LoadInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	data, err := d.GetData(fuel.Request{Start: 0, Stop: len(names)})
	if err != nil {
		t.Fatal(err)
	}
	images, err := data[0].Parts()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range want {
		if got := images[i].Shape; len(got) != 3 || got[0] != 3 || got[1] != 2 || got[2] != width[n] {
			t.Errorf("train image %d has shape %v, want (3, 2, %d) (%s)", i, got, width[n], n)
		}
		if v := images[i].Flat(0); v < 198 || v > 202 {
			t.Errorf("train image %d: pixel %v, want about 200", i, v)
		}
		wantTarget := 0.0
		if strings.Contains(n, "dog") {
			wantTarget = 1
		}
		if got := data[1].Flat(i); got != wantTarget {
			t.Errorf("target %d = %v, want %v (%s)", i, got, wantTarget, n)
		}
	}
	dt, err := h5.Open(out, []string{"test"}, h5.Options{LoadInMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	if srcs := dt.Sources(); len(srcs) != 1 || srcs[0] != "image_features" {
		t.Errorf("the test split provides %v, want [image_features]", srcs)
	}
	tdata, err := dt.GetData(fuel.Request{Start: 0, Stop: 3})
	if err != nil {
		t.Fatal(err)
	}
	timages, _ := tdata[0].Parts()
	for i, h := range []int{1, 2, 10} {
		if got := timages[i].Shape; got[1] != h {
			t.Errorf("test image %d has height %d, want %d (sorted by number)", i, got[1], h)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConvertDogsVsCatsBadInput: a corrupt archive, a member that is not
// an image and a test image not named by number give errors naming them,
// and leave no output file.
func TestConvertDogsVsCatsBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		train []byte
		test  []string
		want  string
	}{
		{"corrupt zip", []byte("PK\x03\x04 not really a zip"), []string{"test1/1.jpg"}, "dogs_vs_cats.train.zip"},
		{"test name", nil, []string{"test1/abc.jpg"}, "not named <number>"},
		{"not an image", nil, []string{"test1/1.jpg", "test1/2.txt"}, "test1/2.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.train != nil {
				os.WriteFile(filepath.Join(dir, dogsVsCatsTrain), c.train, 0o644)
			} else {
				writeZip(t, filepath.Join(dir, dogsVsCatsTrain), []string{"train/cat.0.jpg"}, func(string) []byte { return grayJPEG(t, 1, 1, 0) })
			}
			writeZip(t, filepath.Join(dir, dogsVsCatsTest), c.test, func(n string) []byte {
				if strings.HasSuffix(n, ".txt") {
					return []byte("hello")
				}
				return grayJPEG(t, 1, 1, 0)
			})
			_, err := Convert("dogs_vs_cats", Options{Directory: dir, OutputDirectory: dir})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "dogs_vs_cats.hdf5")); err == nil {
				t.Error("a failed conversion left dogs_vs_cats.hdf5")
			}
		})
	}
}
