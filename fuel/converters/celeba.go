package converters

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// CelebA's files and Fuel's split boundaries (celeba.py's TRAIN_STOP and
// VALID_STOP; the full dataset has 202,599 images).
const (
	celebAImages     = "img_align_celeba.zip"
	celebAAttributes = "list_attr_celeba.txt"
	celebATrainStop  = 162770
	celebAValidStop  = 182637
)

// fillCelebA is Fuel's convert_celeba: which_format "aligned_cropped"
// (the 218x178 images as they are) or "64" (resized to 78x64 with PIL's
// ANTIALIAS filter, then rows 7 to 70 kept: 64x64). features uint8 (N,
// 3, h, w) labelled batch, channel, height, width; targets uint8 (N, 40)
// labelled batch, target: list_attr_celeba.txt's 40 attributes (after its
// two header lines) mapped from -1/1 to 0/1. Splits train [0, 162770),
// valid [162770, 182637), test [182637, N).
//
// Departure: Fuel's number of examples is the constant 202,599 (its test
// patches it to 10); here it is the number of records in the attribute
// file, and the split boundaries are clipped to it. Images are written
// one at a time, so the 23 GB aligned_cropped file is never in memory.
func fillCelebA(w *h5.Writer, opts Options) error {
	var h, wd int
	switch opts.WhichFormat {
	case "aligned_cropped":
		h, wd = 218, 178
	case "64":
		h, wd = 64, 64
	default:
		return fmt.Errorf("CelebA format needs to be either 'aligned_cropped' or '64', got %q", opts.WhichFormat)
	}
	files, err := findInput("celeba", opts.Directory, false, celebAImages, celebAAttributes)
	if err != nil {
		return err
	}
	targets, err := celebATargets(files[1])
	if err != nil {
		return err
	}
	n := targets.Shape[0]
	if err := w.CreateSource("targets", nd.Uint8, []int{n, 40}, []string{"batch", "target"}); err != nil {
		return err
	}
	if err := w.WriteRows("targets", 0, targets); err != nil {
		return err
	}
	if err := w.CreateSource("features", nd.Uint8, []int{n, 3, h, wd}, imageLabels); err != nil {
		return err
	}
	zr, err := zip.OpenReader(files[0])
	if err != nil {
		return fmt.Errorf("%s: %w", celebAImages, err)
	}
	defer zr.Close()
	members := map[string]*zip.File{}
	for _, f := range zr.File {
		members[f.Name] = f
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("img_align_celeba/%06d.jpg", i+1)
		f, ok := members[name]
		if !ok {
			return fmt.Errorf("%s: no member %s (the attribute file lists %d images)", celebAImages, name, n)
		}
		b, err := readZipMember(f)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", celebAImages, name, err)
		}
		im, err := decodeRGB(b)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", celebAImages, name, err)
		}
		if im.Shape[1] != 218 || im.Shape[2] != 178 {
			return fmt.Errorf("%s: %s is %dx%d, want 218x178 (height x width)", celebAImages, name, im.Shape[1], im.Shape[2])
		}
		if opts.WhichFormat == "64" {
			im = cropRows(resizeLanczos(im, 78, 64), 7, 64)
		}
		row, _ := im.Reshape(1, 3, h, wd)
		if err := w.WriteRows("features", i, row); err != nil {
			return err
		}
	}
	clip := func(v int) int { return min(v, n) }
	for _, s := range []struct {
		name        string
		start, stop int
	}{{"train", 0, clip(celebATrainStop)}, {"valid", clip(celebATrainStop), clip(celebAValidStop)}, {"test", clip(celebAValidStop), n}} {
		if err := w.AddSplit(h5.SplitDef{Name: s.name, Start: s.start, Stop: s.stop}); err != nil {
			return err
		}
	}
	return nil
}

// cropRows keeps rows [top, top+n) of a (c, h, w) uint8 image (PIL's
// crop((0, top, w, top+n))).
func cropRows(im *nd.Array, top, n int) *nd.Array {
	c, h, w := im.Shape[0], im.Shape[1], im.Shape[2]
	src := im.Data.([]uint8)
	out := make([]uint8, c*n*w)
	for ch := 0; ch < c; ch++ {
		copy(out[ch*n*w:(ch+1)*n*w], src[ch*h*w+top*w:ch*h*w+(top+n)*w])
	}
	return nd.FromSlice(out, c, n, w)
}

// celebATargets reads list_attr_celeba.txt as numpy.loadtxt(dtype='int32',
// skiprows=2, usecols=range(1, 41)) does, and maps each -1/1 to 0/1
// ((x + 1) / 2 stored as uint8).
func celebATargets(path string) (*nd.Array, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 2 {
		return nil, fmt.Errorf("%s: want two header lines, then one line per image", filepath.Base(path))
	}
	var out []uint8
	n := 0
	for i, l := range lines[2:] {
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 41 {
			return nil, fmt.Errorf("%s: line %d: %d fields, want an image name and 40 attributes", filepath.Base(path), i+3, len(fields))
		}
		for _, s := range fields[1:41] {
			v, err := strconv.Atoi(s)
			if err != nil || (v != 1 && v != -1) {
				return nil, fmt.Errorf("%s: line %d: attribute %q is not -1 or 1", filepath.Base(path), i+3, s)
			}
			out = append(out, uint8((v+1)/2))
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no image records", filepath.Base(path))
	}
	return nd.FromSlice(out, n, 40), nil
}

// readZipMember reads a zip member, refusing one whose stated size is
// beyond maxMember.
func readZipMember(f *zip.File) ([]byte, error) {
	if f.UncompressedSize64 > maxMember {
		return nil, fmt.Errorf("%d bytes: too large for an image", f.UncompressedSize64)
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, maxMember+1))
}

// maxMember bounds the size of one archive member the converters read
// into memory (an image or a MAT-file).
const maxMember = 1 << 30
