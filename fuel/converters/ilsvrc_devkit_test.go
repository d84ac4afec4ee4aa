package converters

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// metaExpected is what make_meta_mat.py prints: scipy's loadmat of the
// file it wrote with savemat, and Fuel's read_metadata_mat_file on it.
type metaExpected struct {
	Synsets  []ILSVRCSynset
	Cost     [][]int
	CellDims []int
	Cell     []json.RawMessage
	Logical  []int
	Int16    [][]int
	Text     string
	NTrain   int
}

// checkMeta compares this package's reading of a MAT-file with scipy's.
func checkMeta(t *testing.T, what string, b []byte, year int, want metaExpected) {
	t.Helper()
	synsets, cost, err := ReadILSVRCMetadataMat(b, year)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(synsets, want.Synsets) {
		t.Errorf("%s: synsets\n got %+v\nwant %+v", what, synsets, want.Synsets)
	}
	if year == 2010 {
		if cost == nil || cost.Shape[0] != len(want.Cost) || cost.Shape[1] != len(want.Cost[0]) {
			t.Fatalf("%s: cost matrix %v", what, cost)
		}
		data := cost.Data.([]uint8)
		for i, row := range want.Cost {
			for j, v := range row {
				if int(data[i*cost.Shape[1]+j]) != v {
					t.Fatalf("%s: cost[%d, %d] = %d, want %d", what, i, j, data[i*cost.Shape[1]+j], v)
				}
			}
		}
	} else if cost != nil {
		t.Errorf("%s: a cost matrix for 2012", what)
	}
	vars, err := ParseMat(b)
	if err != nil {
		t.Fatal(err)
	}
	cell := vars["extra_cell"]
	if cell == nil || cell.Class != "cell" || !slices.Equal(cell.Dims, want.CellDims) || len(cell.Cells) != 4 {
		t.Fatalf("%s: extra_cell %+v", what, cell)
	}
	// Column-major: (0,0), (1,0), (0,1), (1,1).
	var c00 float64
	var c01 string
	var c10 []float64
	var c11 []int
	for k, dst := range []any{&c00, &c01, &c10, &c11} {
		if err := json.Unmarshal(want.Cell[k], dst); err != nil {
			t.Fatalf("%s: expected cell %d: %v", what, k, err)
		}
	}
	if got := cell.Cells[0]; got.Class != "double" || !slices.Equal(got.Numbers, []float64{c00}) {
		t.Errorf("%s: cell(1,1) %+v, want %v", what, got, c00)
	}
	if got, err := cell.Cells[2].Text(); err != nil || got != c01 {
		t.Errorf("%s: cell(1,2) %q %v, want %q", what, got, err, c01)
	}
	if got := cell.Cells[1]; got.Class != "int16" || !slices.Equal(got.Numbers, c10) {
		t.Errorf("%s: cell(2,1) %+v, want int16 %v", what, got, c10)
	}
	if got := cell.Cells[3]; got.Len() != 0 || !slices.Equal(got.Dims, c11) {
		t.Errorf("%s: cell(2,2) %+v, want empty %v", what, got, c11)
	}
	lg := vars["extra_logical"]
	var gotLogical []int
	for _, x := range lg.Numbers {
		gotLogical = append(gotLogical, int(x))
	}
	if lg.Class != "logical" || !slices.Equal(gotLogical, want.Logical) {
		t.Errorf("%s: extra_logical %+v, want %v", what, lg, want.Logical)
	}
	i16 := vars["extra_int16"]
	rows, cols := len(want.Int16), len(want.Int16[0])
	if i16.Class != "int16" || !slices.Equal(i16.Dims, []int{rows, cols}) {
		t.Fatalf("%s: extra_int16 %+v", what, i16)
	}
	for i := range rows {
		for j := range cols {
			if int(i16.Numbers[j*rows+i]) != want.Int16[i][j] {
				t.Errorf("%s: extra_int16(%d,%d) = %v, want %d", what, i+1, j+1, i16.Numbers[j*rows+i], want.Int16[i][j])
			}
		}
	}
	if got, err := vars["extra_text"].Text(); err != nil || got != want.Text {
		t.Errorf("%s: extra_text %q %v, want %q", what, got, err, want.Text)
	}
}

func readExpected(t *testing.T, b []byte) metaExpected {
	var want metaExpected
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestReadILSVRCMetadataMatFixtures reads the committed meta.mat files
// (written by scipy.io.savemat through testdata/make_meta_mat.py:
// 2010 compressed, 2012 not) and compares with what scipy and Fuel's
// read_metadata_mat_file read from them (the committed JSON).
func TestReadILSVRCMetadataMatFixtures(t *testing.T) {
	for _, c := range []struct {
		name string
		year int
	}{{"meta2010", 2010}, {"meta2012", 2012}} {
		b, err := os.ReadFile(filepath.Join("testdata", c.name+".mat"))
		if err != nil {
			t.Fatal(err)
		}
		j, err := os.ReadFile(filepath.Join("testdata", c.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		checkMeta(t, c.name, b, c.year, readExpected(t, j))
	}
}

// TestReadILSVRCMetadataMatMatchesScipy: fresh files from scipy's savemat
// (Debian's python3-scipy, the reference), compressed and not, several
// seeds.
func TestReadILSVRCMetadataMatMatchesScipy(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import scipy.io").Run() != nil {
		t.Skip("Debian's python3-scipy is the reference (TestReadILSVRCMetadataMatFixtures reads files it wrote)")
	}
	dir := t.TempDir()
	for _, year := range []int{2010, 2012} {
		for _, compress := range []string{"0", "1"} {
			for seed := 3; seed < 5; seed++ {
				out := filepath.Join(dir, fmt.Sprintf("m%d_%s_%d.mat", year, compress, seed))
				j, err := exec.Command("/usr/bin/python3", "testdata/make_meta_mat.py", out, fmt.Sprint(year), fmt.Sprint(seed), compress).Output()
				if err != nil {
					t.Fatalf("make_meta_mat.py: %v", err)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				checkMeta(t, filepath.Base(out), b, year, readExpected(t, j))
			}
		}
	}
}

// fakeDevkit writes a development kit archive (tar.gz) holding meta and
// the validation ground truth at the kit's member paths.
func fakeDevkit(t *testing.T, path, metaPath, gtPath string, meta []byte, gt string) {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, m := range []struct {
		name string
		data []byte
	}{{"devkit/readme.txt", []byte("x")}, {metaPath, meta}, {gtPath, []byte(gt)}} {
		tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data)), Typeflag: tar.TypeReg})
		tw.Write(m.data)
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPrepareILSVRCMetadata: read_devkit and prepare_metadata of 2010
// and 2012 on development kits built around the fixtures: n_train is the
// sum of num_train_images, the ground truths map IDs to table rows, the
// WordNet map covers the classes, 2012 counts the test archive's members.
func TestPrepareILSVRCMetadata(t *testing.T) {
	dir := t.TempDir()
	for _, year := range []int{2010, 2012} {
		name := fmt.Sprintf("meta%d", year)
		meta, _ := os.ReadFile(filepath.Join("testdata", name+".mat"))
		j, _ := os.ReadFile(filepath.Join("testdata", name+".json"))
		want := readExpected(t, j)
		n := len(want.Synsets)
		// Validation labels: IDs n, 1, 2, ...; test labels: 2, 3, ...
		var valid, test []string
		for i := range 7 {
			valid = append(valid, fmt.Sprint((i+n-1)%n+1))
			test = append(test, fmt.Sprint(i%n+2))
		}
		sub := filepath.Join(dir, name)
		os.MkdirAll(sub, 0o755)
		var m *ILSVRCMetadata
		var err error
		if year == 2010 {
			kit := filepath.Join(sub, ILSVRC2010DevkitArchive)
			fakeDevkit(t, kit, ILSVRC2010DevkitMetaPath, ILSVRC2010DevkitValidGTPath, meta, strings.Join(valid, "\n")+"\n")
			_, cost, gt, err := ReadILSVRCDevkit(kit, 2010)
			if err != nil || cost == nil || len(gt) != 7 || gt[0] != n || gt[1] != 1 {
				t.Fatalf("read_devkit: %v %v %v", gt, cost, err)
			}
			tgt := filepath.Join(sub, ILSVRC2010TestGroundtruth)
			os.WriteFile(tgt, []byte(strings.Join(test, "\n")), 0o644)
			m, err = PrepareILSVRC2010Metadata(kit, tgt)
		} else {
			kit := filepath.Join(sub, ILSVRC2012DevkitArchive)
			fakeDevkit(t, kit, ILSVRC2012DevkitMetaPath, ILSVRC2012DevkitValidGTPath, meta, strings.Join(valid, "\n"))
			writeTar(t, filepath.Join(sub, ILSVRC2012TestImagesTar), [][2]any{{"a.JPEG", []byte("1")}, {"b.JPEG", []byte("2")}, {"c.JPEG", []byte("3")}})
			m, err = PrepareILSVRC2012Metadata(kit)
		}
		if err != nil {
			t.Fatalf("%d: prepare_metadata: %v", year, err)
		}
		if m.NTrain != want.NTrain {
			t.Errorf("%d: n_train %d, want %d", year, m.NTrain, want.NTrain)
		}
		wantValid := []int{n - 1, 0, 1, 2, 3, 4, 5}
		if !slices.Equal(m.ValidGroundtruth, wantValid) {
			t.Errorf("%d: valid ground truth %v, want %v", year, m.ValidGroundtruth, wantValid)
		}
		if year == 2010 && !slices.Equal(m.TestGroundtruth, []int{1, 2, 3, 4, 5, 6, 7}) {
			t.Errorf("test ground truth %v", m.TestGroundtruth)
		}
		if year == 2012 && m.NTest != 3 {
			t.Errorf("n_test %d, want 3", m.NTest)
		}
		if len(m.WNIDMap) != n {
			t.Errorf("%d: wnid_map of %d, want %d", year, len(m.WNIDMap), n)
		}
		for i, s := range want.Synsets {
			if m.WNIDMap[s.WNID] != i || len(s.WNID) != 9 {
				t.Errorf("%d: wnid_map[%s] = %d, want %d", year, s.WNID, m.WNIDMap[s.WNID], i)
			}
		}
	}
}

// TestILSVRCDevkitBadInput: every malformed kit is an error naming what
// is wrong.
func TestILSVRCDevkitBadInput(t *testing.T) {
	dir := t.TempDir()
	meta, _ := os.ReadFile(filepath.Join("testdata", "meta2010.mat"))
	kit := filepath.Join(dir, "kit.tar.gz")
	for _, c := range []struct {
		what, meta, metaPath, gt, want string
	}{
		{"no meta.mat", "", "other.mat", "1\n", "no member " + ILSVRC2010DevkitMetaPath},
		{"not a MAT-file", strings.Repeat("x", 200), ILSVRC2010DevkitMetaPath, "1\n", "not a MAT-file"},
		{"bad ground truth", string(meta), ILSVRC2010DevkitMetaPath, "1\nabc\n", `line 2: "abc" is not an int16`},
		{"a label out of int16", string(meta), ILSVRC2010DevkitMetaPath, "70000\n", "is not an int16"},
	} {
		fakeDevkit(t, kit, c.metaPath, ILSVRC2010DevkitValidGTPath, []byte(c.meta), c.gt)
		if _, _, _, err := ReadILSVRCDevkit(kit, 2010); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
	fakeDevkit(t, kit, ILSVRC2010DevkitMetaPath, ILSVRC2010DevkitValidGTPath, meta, "999\n")
	tgt := filepath.Join(dir, "test.txt")
	os.WriteFile(tgt, []byte("1\n"), 0o644)
	if _, err := PrepareILSVRC2010Metadata(kit, tgt); err == nil || !strings.Contains(err.Error(), "label 999 (line 1) is no synset's ID") {
		t.Errorf("an unknown label: %v", err)
	}
	if _, err := PrepareILSVRC2010Metadata(kit, filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("a missing test ground truth: no error")
	}
	if _, err := PrepareILSVRC2012Metadata(kit); err == nil {
		t.Error("a 2010 kit read as 2012: no error")
	}
	if _, _, err := ReadILSVRCMetadataMat(meta, 2012); err == nil || !strings.Contains(err.Error(), `no field "ILSVRC2012_ID"`) {
		t.Errorf("a 2010 meta.mat read as 2012: %v", err)
	}
	if _, _, err := ReadILSVRCMetadataMat(meta, 2011); err == nil {
		t.Error("year 2011: no error")
	}
	m2012, _ := os.ReadFile(filepath.Join("testdata", "meta2012.mat"))
	if _, _, err := ReadILSVRCMetadataMat(m2012, 2010); err == nil {
		t.Error("a 2012 meta.mat read as 2010: no error")
	}
}

// FuzzParseMat: any bytes give values or an error, never a panic, a hang
// or an allocation beyond the input's size.
func FuzzParseMat(f *testing.F) {
	for _, name := range []string{"meta2010.mat", "meta2012.mat"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vars, err := ParseMat(b)
		if err != nil {
			return
		}
		for _, year := range []int{2010, 2012} {
			ReadILSVRCMetadataMat(b, year)
		}
		for _, v := range vars {
			v.Text()
			v.Field(0, "WNID")
		}
	})
}
