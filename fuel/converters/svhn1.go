package converters

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/fuel/h5"
	"github.com/blocks-go/blocks/nd"
)

// svhn1Sources are convert_svhn_format_1's sources: their dtypes and the
// labels of their example axes.
var svhn1Sources = []struct {
	name   string
	dtype  nd.DType
	labels []string
}{
	{"features", nd.Uint8, []string{"channel", "height", "width"}},
	{"bbox_labels", nd.Uint8, []string{"bounding_box", "index"}},
	{"bbox_heights", nd.Uint16, []string{"bounding_box", "height"}},
	{"bbox_widths", nd.Uint16, []string{"bounding_box", "width"}},
	{"bbox_lefts", nd.Uint16, []string{"bounding_box", "x"}},
	{"bbox_tops", nd.Uint16, []string{"bounding_box", "y"}},
}

// fillSVHN1 is Fuel's convert_svhn_format_1: {train,test,extra}.tar.gz,
// each a directory named after its split holding 1.png, 2.png, ... and
// digitStruct.mat (MATLAB 7.3: HDF5, read by h5.ReadDigitStruct). Every
// source is variable-length with Fuel's layout (uint16 <source>_shapes
// and <source>_vlen_axis_labels scales): features uint8 (3, h, w), and
// per image one row per bounding box of bbox_labels uint8 (label 10 is
// 0), bbox_heights, bbox_widths, bbox_lefts and bbox_tops uint16
// (negative values are 0). Splits train, test and extra, in that order.
// The images are extracted to a temporary directory (as Fuel does), so an
// archive is never held in memory.
func fillSVHN1(w *h5.Writer, opts Options) error {
	files, err := findInput("svhn", opts.Directory, false, "train.tar.gz", "test.tar.gz", "extra.tar.gz")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "svhn1-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	splits := []string{"train", "test", "extra"}
	counts := make([]int, 3)
	for k, split := range splits {
		if counts[k], err = extractSVHN1(files[k], split, filepath.Join(tmp, split)); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(files[k]), err)
		}
	}
	total := counts[0] + counts[1] + counts[2]
	for _, s := range svhn1Sources {
		if err := w.CreateVlenSource(s.name, s.dtype, total, append([]string{"batch"}, s.labels...),
			h5.VlenLayout{ShapesDType: nd.Uint16, LabelsName: s.name + "_vlen_axis_labels"}); err != nil {
			return err
		}
	}
	offset := 0
	for k, split := range splits {
		dir := filepath.Join(tmp, split)
		boxes, err := h5.ReadDigitStruct(filepath.Join(dir, "digitStruct.mat"))
		if err != nil {
			return fmt.Errorf("%s: %s/digitStruct.mat: %w", filepath.Base(files[k]), split, err)
		}
		if len(boxes) < counts[k] {
			return fmt.Errorf("%s: %s/digitStruct.mat describes %d images, the archive holds %d", filepath.Base(files[k]), split, len(boxes), counts[k])
		}
		for i := 0; i < counts[k]; i++ {
			b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i+1)+".png"))
			if err != nil {
				return err
			}
			im, err := decodeRGB(b)
			if err != nil {
				return fmt.Errorf("%s: %s/%d.png: %w", filepath.Base(files[k]), split, i+1, err)
			}
			index := offset + i
			if err := w.WriteVlenExample("features", index, im); err != nil {
				return err
			}
			bx := boxes[i]
			for j, field := range [][]float64{bx.Labels, bx.Heights, bx.Widths, bx.Lefts, bx.Tops} {
				s := svhn1Sources[j+1]
				col := nd.New(s.dtype, len(field), 1)
				for r, v := range field {
					v = max(0, float64(int64(v))) // int(), then numpy.maximum(0, ...)
					if j == 0 && v == 10 {
						v = 0
					}
					col.SetFlat(r, v)
				}
				if err := w.WriteVlenExample(s.name, index, col); err != nil {
					return err
				}
			}
		}
		if err := w.AddSplit(h5.SplitDef{Name: split, Start: offset, Stop: offset + counts[k]}); err != nil {
			return err
		}
		offset += counts[k]
	}
	return nil
}

// extractSVHN1 extracts <split>/<n>.png and <split>/digitStruct.mat from
// a format 1 archive into dir and returns the number of images (Fuel's
// count: the members whose name contains ".png"). Only those members are
// written, under names made here, so no member name reaches the file
// system.
func extractSVHN1(archive, split, dir string) (int, error) {
	f, err := os.Open(archive)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return 0, fmt.Errorf("not a gzipped tar: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	tr := tar.NewReader(gz)
	count, maxIndex := 0, 0
	haveStruct := false
	present := map[int]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("reading the archive: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if strings.Contains(hdr.Name, ".png") {
			count++
		}
		if hdr.Typeflag != tar.TypeReg || path.Dir(name) != split {
			continue
		}
		base := path.Base(name)
		var out string
		if base == "digitStruct.mat" {
			out = filepath.Join(dir, "digitStruct.mat")
			haveStruct = true
		} else if n, err := strconv.Atoi(strings.TrimSuffix(base, ".png")); err == nil && strings.HasSuffix(base, ".png") && n > 0 {
			out = filepath.Join(dir, strconv.Itoa(n)+".png")
			present[n] = true
			maxIndex = max(maxIndex, n)
		} else {
			continue
		}
		if hdr.Size > maxMember {
			return 0, fmt.Errorf("%s: %d bytes is too large", hdr.Name, hdr.Size)
		}
		if err := writeFileFrom(out, tr); err != nil {
			return 0, fmt.Errorf("%s: %w", hdr.Name, err)
		}
	}
	if !haveStruct {
		return 0, fmt.Errorf("no member %s/digitStruct.mat", split)
	}
	for i := 1; i <= count; i++ {
		if !present[i] {
			return 0, fmt.Errorf("%d PNG members but no %s/%d.png", count, split, i)
		}
	}
	return count, nil
}

func writeFileFrom(path string, r io.Reader) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
