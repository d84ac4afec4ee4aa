package starlib_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/fuel/datasets"
	testdata "github.com/blocks-go/blocks/internal/fixtures"
	"github.com/blocks-go/blocks/numpyrand"
)

// makeFixture is a chunk's "# option:fixture NAME": it writes into dir
// the fake input files an upstream test's setUp writes, where they are too
// large to keep in testdata (tens of thousands of archive members), with
// setUp's seeds and shapes. Python's PIL is replaced by Go's JPEG encoder
// (the tests check shapes, counts and the values of flat images, which
// both encoders keep).
func makeFixture(t *testing.T, c *chunk, name, dir string) {
	t.Helper()
	gen, ok := fixtures[name]
	if !ok {
		t.Fatalf("%s:%d: option:fixture: unknown fixture %q", c.file, c.firstLine, name)
	}
	if err := gen(dir); err != nil {
		t.Fatalf("%s:%d: option:fixture %s: %v", c.file, c.firstLine, name, err)
	}
}

var fixtures = map[string]func(dir string) error{
	"dogs_vs_cats": dogsVsCatsFixture,
	"celeba":       celebAFixture,
	"adult":        adultFixture,
	"ilsvrc2010":   ilsvrc2010Fixture,
	"mnist":        mnistFixture,
}

// mnistFixture writes into dir/mnist four idx files of MNIST's names and
// sizes made from the subset shipped in the binary (its examples are
// MNIST's first ones, repeated: internal/fixtures.WriteMNIST), where Fuel's
// MNIST tests find MNIST on the data path dir.
func mnistFixture(dir string) error {
	sub := filepath.Join(dir, "mnist")
	if err := os.Mkdir(sub, 0o755); err != nil {
		return err
	}
	return testdata.WriteMNIST(sub, datasets.EmbeddedMNISTFiles())
}

// encodeJPEG is PIL's Image.save(f, 'JPEG') (quality 75) of an RGB image
// given as (height, width, 3) bytes.
func encodeJPEG(pix []uint8, h, w int) ([]byte, error) {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := im.PixOffset(x, y)
			copy(im.Pix[o:o+3], pix[(y*w+x)*3:(y*w+x)*3+3])
			im.Pix[o+3] = 255
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, im, &jpeg.Options{Quality: 75}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeZip writes a zip of the named members (a name ending in "/" is a
// directory entry), in order.
func writeZip(path string, names []string, data func(i int) []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for i, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		if err != nil {
			f.Close()
			return err
		}
		if !strings.HasSuffix(n, "/") {
			if _, err := w.Write(data(i)); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dogsVsCatsFixture is tests/test_dogs_vs_cats.py's _make_dummy_data: a
// 1x1 black RGB JPEG as every one of 25,000 training images
// (train/cat.<i>.jpeg) and 12,500 test images (test1/<i>.jpeg), each
// archive's first member its directory.
func dogsVsCatsFixture(dir string) error {
	img, err := encodeJPEG([]uint8{0, 0, 0}, 1, 1)
	if err != nil {
		return err
	}
	same := func(int) []byte { return img }
	for _, s := range []struct {
		set, format string
		n           int
	}{{"train", "train/cat.%d.jpeg", 25000}, {"test1", "test1/%d.jpeg", 12500}} {
		names := []string{s.set + "/"}
		for i := 0; i < s.n; i++ {
			names = append(names, fmt.Sprintf(s.format, i))
		}
		if err := writeZip(filepath.Join(dir, "dogs_vs_cats."+s.set+".zip"), names, same); err != nil {
			return err
		}
	}
	return nil
}

// celebAFixture is TestCelebA.setUp: numpy.random.seed(21 + 1 + 2016),
// ten random (218, 178, 3) images as img_align_celeba/00000<i>.jpg in
// img_align_celeba.zip, and list_attr_celeba.txt: two header lines, then
// each image's name and forty 1s.
func celebAFixture(dir string) error {
	rng := numpyrand.New(21 + 1 + 2016)
	const n, h, w = 10, 218, 178
	var names []string
	var images [][]byte
	for i := 0; i < n; i++ {
		pix := make([]uint8, h*w*3)
		for j := range pix {
			pix[j] = uint8(rng.Randint(0, 256))
		}
		b, err := encodeJPEG(pix, h, w)
		if err != nil {
			return err
		}
		images = append(images, b)
		names = append(names, fmt.Sprintf("img_align_celeba/%06d.jpg", i+1))
	}
	if err := writeZip(filepath.Join(dir, "img_align_celeba.zip"), names, func(i int) []byte { return images[i] }); err != nil {
		return err
	}
	var attrs strings.Builder
	attrs.WriteString("mock\nmock")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&attrs, "\n%06d.jpg%s", i, strings.Repeat(" 1", 40))
	}
	return os.WriteFile(filepath.Join(dir, "list_attr_celeba.txt"), []byte(attrs.String()), 0o644)
}

// adultFixture stands in for the real UCI files TestAdult.test_convert
// downloads (make test runs offline): adult.data and adult.test with the
// real files' layout (", "-separated records, adult.test's first line
// "|1x3 Cross validator", test incomes ending in '.', a blank last line)
// and the real counts: 30,162 + 15,060 complete records, each categorical
// attribute taking the real files' values (41 native countries in
// adult.data, 40 in adult.test), and records with '?' that the converter
// drops.
func adultFixture(dir string) error {
	cats := [][]string{
		{"Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov", "Without-pay"},
		{"Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th", "7th-8th",
			"12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"},
		{"Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed", "Married-spouse-absent", "Married-AF-spouse"},
		{"Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty", "Handlers-cleaners",
			"Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv", "Armed-Forces"},
		{"Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"},
		{"White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"},
		{"Female", "Male"},
		{"United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany", "Outlying-US(Guam-USVI-etc)", "India",
			"Japan", "Greece", "South", "China", "Cuba", "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica",
			"Vietnam", "Mexico", "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti",
			"Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
			"Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"},
	}
	record := func(i int, test, missing bool) string {
		c := func(k int) string {
			if missing && k == 3 {
				return "?"
			}
			vals := cats[k]
			if test && k == 7 {
				vals = vals[:40] // adult.test has no Holand-Netherlands
			}
			return vals[i%len(vals)]
		}
		income := []string{"<=50K", ">50K"}[i%2]
		if test {
			income += "."
		}
		return fmt.Sprintf("%d, %s, %d, %s, %d, %s, %s, %s, %s, %s, %d, %d, %d, %s, %s\n",
			17+i%70, c(0), 10000+i*7, c(1), 1+i%16, c(2), c(3), c(4), c(5), c(6), i%5000, i%300, 1+i%99, c(7), income)
	}
	for _, f := range []struct {
		name, head string
		n          int
		test       bool
	}{{"adult.data", "", 30162, false}, {"adult.test", "|1x3 Cross validator\n", 15060, true}} {
		var b strings.Builder
		b.WriteString(f.head)
		for i := 0; i < f.n; i++ {
			b.WriteString(record(i, f.test, false))
			if i%1000 == 999 { // a record with a missing occupation, dropped
				b.WriteString(record(i, f.test, true))
			}
		}
		b.WriteString("\n")
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fakeJPEG is one image of test_convert_ilsvrc2010.py's
// create_fake_jpeg_tar: random sizes in [20, 50], 1 or 3 channels, random
// pixels, or (random false) every pixel the image's number.
func fakeJPEG(rng *numpyrand.RandomState, i int, random bool) ([]byte, error) {
	h, w := int(rng.Randint(20, 51)), int(rng.Randint(20, 51))
	gray := rng.Randint(0, 2) == 0
	pix := make([]uint8, h*w*3)
	for j := range pix {
		if random {
			pix[j] = uint8(rng.Randint(0, 256))
		} else {
			pix[j] = uint8(i)
		}
	}
	if gray {
		for j := 0; j < h*w; j++ {
			pix[3*j+1], pix[3*j+2] = pix[3*j], pix[3*j]
		}
	}
	return encodeJPEG(pix, h, w)
}

// writeTar writes a plain tar of the named members, in order.
func writeTar(path string, names []string, data [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for i, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(data[i])), Typeflag: tar.TypeReg}); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(data[i]); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ilsvrc2010Fixture writes the archives of test_convert_ilsvrc2010.py's
// test_extract_patch_images and test_load_from_tar_or_patch:
//
//   - patch_images.tar: create_fake_patch_images() (50 images, one value
//     each: 14 under train/, 15 under val/, 21 under test/);
//   - images.tar: create_fake_jpeg_tar(3, 200, 200, gzip_probability=0)
//     (200 random JPEGs; upstream names them by SHA-1 digests of 27 hex
//     digits, here by their number in 27 digits, so that the port can
//     name them: 000...0.JPEG to 000...199.JPEG, in sorted order);
//   - patch_load.tar: create_fake_patch_images(all_filenames[::4],
//     num_train=50): one-value replacements of every fourth image under
//     train/.
func ilsvrc2010Fixture(dir string) error {
	rng := numpyrand.New(1)
	var names []string
	var data [][]byte
	for i := 0; i < 50; i++ {
		set := "train"
		if i >= 14 {
			set = "val"
		}
		if i >= 29 {
			set = "test"
		}
		b, err := fakeJPEG(rng, i, false)
		if err != nil {
			return err
		}
		names = append(names, fmt.Sprintf("%s/%x.JPEG", set, 1000003*(i+1)))
		data = append(data, b)
	}
	if err := writeTar(filepath.Join(dir, "patch_images.tar"), names, data); err != nil {
		return err
	}
	rng = numpyrand.New(3)
	names, data = nil, nil
	for i := 0; i < 200; i++ {
		b, err := fakeJPEG(rng, i, true)
		if err != nil {
			return err
		}
		names = append(names, fmt.Sprintf("%027d.JPEG", i))
		data = append(data, b)
	}
	if err := writeTar(filepath.Join(dir, "images.tar"), names, data); err != nil {
		return err
	}
	rng = numpyrand.New(1)
	var pnames []string
	var pdata [][]byte
	for i := 0; i < 200; i += 4 {
		b, err := fakeJPEG(rng, len(pnames), false)
		if err != nil {
			return err
		}
		pnames = append(pnames, "train/"+names[i])
		pdata = append(pdata, b)
	}
	return writeTar(filepath.Join(dir, "patch_load.tar"), pnames, pdata)
}
