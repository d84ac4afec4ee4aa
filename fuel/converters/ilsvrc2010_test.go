package converters

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTar(t *testing.T, path string, members [][2]any) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, m := range members {
		data := m[1].([]byte)
		if err := tw.WriteHeader(&tar.Header{Name: m[0].(string), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	tw.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// TestLoadFromTarOrPatch: a patched image comes from the patches, a plain
// one is the member's bytes, a gzipped one (ILSVRC2010's archives have
// some) is gunzipped; a member that is neither, a missing member and a
// corrupt archive are errors.
func TestLoadFromTarOrPatch(t *testing.T) {
	dir := t.TempDir()
	a, b, c := grayJPEG(t, 3, 2, 10), grayJPEG(t, 2, 2, 20), grayJPEG(t, 4, 4, 30)
	archive := filepath.Join(dir, "images.tar")
	writeTar(t, archive, [][2]any{{"n1/a.JPEG", a}, {"n1/b.JPEG", gzipped(b)}, {"n1/c.JPEG", c}, {"n1/d.JPEG", []byte("not an image")}})
	patches := map[string][]byte{"c.JPEG": a}
	for _, want := range []struct {
		name    string
		data    []byte
		patched bool
	}{{"n1/a.JPEG", a, false}, {"n1/b.JPEG", b, false}, {"n1/c.JPEG", a, true}} {
		got, patched, err := LoadFromTarOrPatch(archive, want.name, patches)
		if err != nil || !bytes.Equal(got, want.data) || patched != want.patched {
			t.Errorf("%s: %d bytes, patched %v, %v; want %d bytes, patched %v", want.name, len(got), patched, err, len(want.data), want.patched)
		}
	}
	for name, wantErr := range map[string]string{"n1/d.JPEG": "neither an image nor gzipped", "n1/zzz.JPEG": "no member n1/zzz.JPEG"} {
		if _, _, err := LoadFromTarOrPatch(archive, name, patches); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: %v, want %q", name, err, wantErr)
		}
	}
	corrupt := filepath.Join(dir, "corrupt.tar")
	os.WriteFile(corrupt, append([]byte("\x1f\x8b"), bytes.Repeat([]byte{7}, 600)...), 0o644)
	if _, _, err := LoadFromTarOrPatch(corrupt, "x.JPEG", nil); err == nil {
		t.Error("a corrupt archive: no error")
	}
	os.WriteFile(corrupt, bytes.Repeat([]byte{'x'}, 1000), 0o644)
	if _, err := ExtractPatchImages(corrupt, "train"); err == nil || !strings.Contains(err.Error(), "not a readable tar") {
		t.Errorf("a corrupt archive: %v", err)
	}
}

// TestExtractPatchImages: the members of a set's directory ending in
// .JPEG, by base name, from a gzipped archive too; "valid" reads val/.
func TestExtractPatchImages(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "patch_images.tar")
	writeTar(t, archive, [][2]any{
		{"patch/train/a.JPEG", []byte("A")}, {"patch/val/b.JPEG", []byte("B")}, {"patch/val/c.txt", []byte("C")},
		{"test/d.JPEG", []byte("D")}, {"e.JPEG", []byte("E")},
	})
	raw, _ := os.ReadFile(archive)
	gz := filepath.Join(dir, "patch_images.tar.gz")
	os.WriteFile(gz, gzipped(raw), 0o644)
	for _, p := range []string{archive, gz} {
		for set, want := range map[string]string{"train": "a.JPEG=A", "valid": "b.JPEG=B", "test": "d.JPEG=D"} {
			got, err := ExtractPatchImages(p, set)
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for k, v := range got {
				s = append(s, k+"="+string(v))
			}
			if strings.Join(s, ",") != want {
				t.Errorf("%s %s: %v, want %s", filepath.Base(p), set, s, want)
			}
		}
	}
	if _, err := ExtractPatchImages(archive, "val"); err == nil || !strings.Contains(err.Error(), "which_set must be one of train, valid, or test") {
		t.Errorf("which_set val: %v", err)
	}
}
