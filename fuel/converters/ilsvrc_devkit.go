package converters

import (
	"archive/tar"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/nd"
)

// This file reads the ILSVRC2010 and ILSVRC2012 development kits, as
// Fuel's read_metadata_mat_file, read_devkit and prepare_metadata (of
// fuel.converters.ilsvrc2010 and ilsvrc2012): the synsets table and
// (2010) the cost matrix of the kit's meta.mat, and the validation ground
// truth distributed in the kit.

// The members of the development kits Fuel reads.
const (
	ILSVRC2010DevkitArchive     = "ILSVRC2010_devkit-1.0.tar.gz"
	ILSVRC2010DevkitMetaPath    = "devkit-1.0/data/meta.mat"
	ILSVRC2010DevkitValidGTPath = "devkit-1.0/data/ILSVRC2010_validation_ground_truth.txt"
	ILSVRC2010TestGroundtruth   = "ILSVRC2010_test_ground_truth.txt"
	ILSVRC2012DevkitArchive     = "ILSVRC2012_devkit_t12.tar.gz"
	ILSVRC2012DevkitMetaPath    = "ILSVRC2012_devkit_t12/data/meta.mat"
	ILSVRC2012DevkitValidGTPath = "ILSVRC2012_devkit_t12/data/ILSVRC2012_validation_ground_truth.txt"
	ILSVRC2012TestImagesTar     = "ILSVRC2012_img_test.tar"
)

// ILSVRCSynset is one row of Fuel's synsets table (read_metadata_mat_file).
type ILSVRCSynset struct {
	// ID is the competition's ID (the field ILSVRC2010_ID or ILSVRC2012_ID).
	ID            int
	WNID          string
	WordnetHeight int
	Gloss         string
	NumChildren   int
	Words         string
	// Children are the IDs of the synset's children, padded with -1 to
	// the largest num_children of the table, as Fuel pads them.
	Children       []int
	NumTrainImages int
}

// ReadILSVRCMetadataMat is Fuel's read_metadata_mat_file(meta_mat) of
// ILSVRC2010 (year 2010) or ILSVRC2012 (year 2012): the synsets table of
// meta.mat's bytes, and for 2010 its cost_matrix (uint8, shape (rows,
// cols) in MATLAB's index order; nil for 2012).
func ReadILSVRCMetadataMat(meta []byte, year int) ([]ILSVRCSynset, *nd.Array, error) {
	if year != 2010 && year != 2012 {
		return nil, nil, fmt.Errorf("read_metadata_mat_file: year %d (2010 or 2012)", year)
	}
	vars, err := ParseMat(meta)
	if err != nil {
		return nil, nil, fmt.Errorf("meta.mat: %w", err)
	}
	s, ok := vars["synsets"]
	if !ok || s.Class != "struct" {
		return nil, nil, fmt.Errorf("meta.mat: no struct array synsets")
	}
	idField := fmt.Sprintf("ILSVRC%d_ID", year)
	out := make([]ILSVRCSynset, len(s.Elems))
	maxChildren := 0
	for i := range out {
		row := &out[i]
		for _, f := range []struct {
			name string
			dst  *int
		}{{idField, &row.ID}, {"wordnet_height", &row.WordnetHeight}, {"num_children", &row.NumChildren}, {"num_train_images", &row.NumTrainImages}} {
			v, err := s.Field(i, f.name)
			if err != nil {
				return nil, nil, fmt.Errorf("meta.mat: synsets(%d): %w", i+1, err)
			}
			if *f.dst, err = matScalarInt(v); err != nil {
				return nil, nil, fmt.Errorf("meta.mat: synsets(%d).%s: %w", i+1, f.name, err)
			}
			// Fuel's synsets table holds these in int16 (uint16 for
			// num_train_images): a value outside was silently wrapped.
			lo, hi := math.MinInt16, math.MaxInt16
			if f.name == "num_train_images" {
				lo, hi = 0, math.MaxUint16
			}
			if *f.dst < lo || *f.dst > hi {
				return nil, nil, fmt.Errorf("meta.mat: synsets(%d).%s: %d does not fit the table's column (%d to %d)", i+1, f.name, *f.dst, lo, hi)
			}
		}
		for _, f := range []struct {
			name string
			dst  *string
		}{{"WNID", &row.WNID}, {"gloss", &row.Gloss}, {"words", &row.Words}} {
			v, err := s.Field(i, f.name)
			if err == nil {
				*f.dst, err = v.Text()
			}
			if err != nil {
				return nil, nil, fmt.Errorf("meta.mat: synsets(%d).%s: %w", i+1, f.name, err)
			}
		}
		v, err := s.Field(i, "children")
		if err != nil {
			return nil, nil, fmt.Errorf("meta.mat: synsets(%d): %w", i+1, err)
		}
		if v.Class == "char" || v.Class == "cell" || v.Class == "struct" {
			return nil, nil, fmt.Errorf("meta.mat: synsets(%d).children: a %s array, want numbers", i+1, v.Class)
		}
		for _, c := range v.Numbers {
			if c != math.Trunc(c) || c < math.MinInt16 || c > math.MaxInt16 {
				return nil, nil, fmt.Errorf("meta.mat: synsets(%d).children: %v is not an ID", i+1, c)
			}
			row.Children = append(row.Children, int(c))
		}
		maxChildren = max(maxChildren, row.NumChildren)
	}
	// The children are padded to the largest num_children: a table of
	// len(out) rows of that width, checked before it is built (a 976-byte
	// meta.mat with num_children = 2**28 asked for 8 GB).
	if err := nd.CheckBudget(nd.Int64, []int{len(out), maxChildren}); err != nil {
		return nil, nil, fmt.Errorf("meta.mat: the children table (%d synsets, the largest num_children %d): %w", len(out), maxChildren, err)
	}
	for i := range out {
		if len(out[i].Children) > maxChildren {
			return nil, nil, fmt.Errorf("meta.mat: synsets(%d) has %d children, more than the largest num_children %d", i+1, len(out[i].Children), maxChildren)
		}
		for len(out[i].Children) < maxChildren {
			out[i].Children = append(out[i].Children, -1)
		}
	}
	if year == 2012 {
		return out, nil, nil
	}
	c, ok := vars["cost_matrix"]
	if !ok || c.Numbers == nil || len(c.Dims) != 2 {
		return nil, nil, fmt.Errorf("meta.mat: no 2-D numeric cost_matrix")
	}
	rows, cols := c.Dims[0], c.Dims[1]
	cost := nd.New(nd.Uint8, rows, cols)
	data := cost.Data.([]uint8)
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			x := c.Numbers[j*rows+i]
			if x < 0 || x > 255 || x != math.Trunc(x) {
				return nil, nil, fmt.Errorf("meta.mat: cost_matrix(%d, %d) = %v is not a uint8", i+1, j+1, x)
			}
			data[i*cols+j] = uint8(x)
		}
	}
	return out, cost, nil
}

// matScalarInt is a one-element numeric array's integer value.
func matScalarInt(v *MatValue) (int, error) {
	if v.Numbers == nil || len(v.Numbers) != 1 {
		return 0, fmt.Errorf("a %s array of dims %v, want one number", v.Class, v.Dims)
	}
	x := v.Numbers[0]
	if x != math.Trunc(x) || math.Abs(x) > 1<<31 {
		return 0, fmt.Errorf("%v is not an integer", x)
	}
	return int(x), nil
}

// ReadILSVRCDevkit is Fuel's read_devkit(f): from the development kit
// archive of year 2010 or 2012, meta.mat's synsets (and 2010's cost
// matrix) and the raw validation ground truth (competition IDs, one per
// line of the kit's ground truth file).
func ReadILSVRCDevkit(archive string, year int) ([]ILSVRCSynset, *nd.Array, []int, error) {
	metaPath, gtPath := ILSVRC2010DevkitMetaPath, ILSVRC2010DevkitValidGTPath
	if year == 2012 {
		metaPath, gtPath = ILSVRC2012DevkitMetaPath, ILSVRC2012DevkitValidGTPath
	}
	members := map[string][]byte{}
	err := eachTarMember(archive, func(hdr *tar.Header, r io.Reader) (bool, error) {
		if hdr.Name != metaPath && hdr.Name != gtPath {
			return false, nil
		}
		b, err := readMember(hdr, r)
		members[hdr.Name] = b
		return len(members) == 2, err
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read_devkit: %w", err)
	}
	for _, p := range []string{metaPath, gtPath} {
		if _, ok := members[p]; !ok {
			return nil, nil, nil, fmt.Errorf("read_devkit: %s: no member %s", filepath.Base(archive), p)
		}
	}
	synsets, cost, err := ReadILSVRCMetadataMat(members[metaPath], year)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read_devkit: %s: %w", filepath.Base(archive), err)
	}
	gt, err := loadInt16Text(members[gtPath])
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read_devkit: %s: %s: %w", filepath.Base(archive), gtPath, err)
	}
	return synsets, cost, gt, nil
}

// loadInt16Text is numpy.loadtxt(f, dtype=numpy.int16) of a file of one
// integer per line (blank lines and # comments skipped).
func loadInt16Text(b []byte) ([]int, error) {
	var out []int
	for i, line := range strings.Split(string(b), "\n") {
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := strconv.ParseInt(line, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not an int16", i+1, line)
		}
		out = append(out, int(v))
	}
	return out, nil
}

// ILSVRCMetadata is what Fuel's prepare_metadata returns.
type ILSVRCMetadata struct {
	NTrain int
	// ValidGroundtruth and (2010) TestGroundtruth are 0-based class
	// indices: the rows of the synsets table of the competition IDs.
	ValidGroundtruth, TestGroundtruth []int
	// NTest is 2012's number of test images (its test ground truth is
	// not public).
	NTest int
	// WNIDMap maps the WordNet IDs of the first 1000 synsets (the
	// classes) to 0-based class indices.
	WNIDMap map[string]int
}

// PrepareILSVRC2010Metadata is ilsvrc2010's prepare_metadata(devkit_archive,
// test_groundtruth_path).
func PrepareILSVRC2010Metadata(devkitArchive, testGroundtruthPath string) (*ILSVRCMetadata, error) {
	synsets, _, rawValid, err := ReadILSVRCDevkit(devkitArchive, 2010)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(testGroundtruthPath)
	if err != nil {
		return nil, fmt.Errorf("prepare_metadata: %w", err)
	}
	rawTest, err := loadInt16Text(b)
	if err != nil {
		return nil, fmt.Errorf("prepare_metadata: %s: %w", filepath.Base(testGroundtruthPath), err)
	}
	m, err := ilsvrcMetadata(synsets, rawValid)
	if err != nil {
		return nil, err
	}
	if m.TestGroundtruth, err = zeroBased(synsets, rawTest, "test"); err != nil {
		return nil, err
	}
	return m, nil
}

// PrepareILSVRC2012Metadata is ilsvrc2012's prepare_metadata(devkit_archive).
// Departure: Fuel counts the members of ILSVRC2012_img_test.tar in the
// working directory; this reads it beside the development kit archive.
func PrepareILSVRC2012Metadata(devkitArchive string) (*ILSVRCMetadata, error) {
	synsets, _, rawValid, err := ReadILSVRCDevkit(devkitArchive, 2012)
	if err != nil {
		return nil, err
	}
	m, err := ilsvrcMetadata(synsets, rawValid)
	if err != nil {
		return nil, err
	}
	testTar := filepath.Join(filepath.Dir(devkitArchive), ILSVRC2012TestImagesTar)
	err = eachTarMember(testTar, func(*tar.Header, io.Reader) (bool, error) {
		m.NTest++
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("prepare_metadata: %w", err)
	}
	return m, nil
}

func ilsvrcMetadata(synsets []ILSVRCSynset, rawValid []int) (*ILSVRCMetadata, error) {
	m := &ILSVRCMetadata{WNIDMap: map[string]int{}}
	for i, s := range synsets {
		m.NTrain += s.NumTrainImages
		if i < 1000 {
			m.WNIDMap[s.WNID] = i
		}
	}
	var err error
	if m.ValidGroundtruth, err = zeroBased(synsets, rawValid, "validation"); err != nil {
		return nil, err
	}
	return m, nil
}

// zeroBased maps competition IDs to the rows of the synsets table.
func zeroBased(synsets []ILSVRCSynset, ids []int, which string) ([]int, error) {
	row := make(map[int]int, len(synsets))
	for i, s := range synsets {
		row[s.ID] = i
	}
	out := make([]int, len(ids))
	for k, id := range ids {
		r, ok := row[id]
		if !ok {
			return nil, fmt.Errorf("prepare_metadata: the %s ground truth's label %d (line %d) is no synset's ID", which, id, k+1)
		}
		out[k] = r
	}
	return out, nil
}
