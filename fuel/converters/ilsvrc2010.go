package converters

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path"
	"strings"
)

// This file holds the parts of Fuel's fuel.converters.ilsvrc2010 that
// read the image archives: the patch images (replacements for images the
// distributed archives hold blank) and the loading of an image from an
// archive or its patch. ilsvrc2010_process.go fills the HDF5 file,
// ilsvrc_devkit.go reads the development kit and ilsvrc_convert.go is the
// converter itself (convert_ilsvrc2010).

// ExtractPatchImages is Fuel's extract_patch_images(f, which_set): the
// replacement images of patch_images.tar (gzipped or not) for one set,
// by file name without its path: the members ending in ".JPEG" whose
// parent directory is the set's ("train", "val" for which_set "valid",
// "test").
func ExtractPatchImages(archive, whichSet string) (map[string][]byte, error) {
	switch whichSet {
	case "train", "test":
	case "valid":
		whichSet = "val"
	default:
		return nil, fmt.Errorf("which_set must be one of train, valid, or test, got %q", whichSet)
	}
	out := map[string][]byte{}
	err := eachTarMember(archive, func(hdr *tar.Header, r io.Reader) (bool, error) {
		if !strings.HasSuffix(hdr.Name, ".JPEG") {
			return false, nil
		}
		tokens := strings.Split(hdr.Name, "/")
		if len(tokens) < 2 || tokens[len(tokens)-2] != whichSet {
			return false, nil
		}
		b, err := readMember(hdr, r)
		if err != nil {
			return false, err
		}
		out[tokens[len(tokens)-1]] = b
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LoadFromTarOrPatch is Fuel's load_from_tar_or_patch(tar, image_filename,
// patch_images): the JPEG bytes of image_filename, from patches (by its
// base name) if there, else from the archive, where ILSVRC2010 gzips some
// images without saying so: a member that does not decode as an image is
// gunzipped, and must decode then. patched reports whether the bytes came
// from patches.
func LoadFromTarOrPatch(archive, imageFilename string, patches map[string][]byte) (data []byte, patched bool, err error) {
	if b, ok := patches[path.Base(imageFilename)]; ok {
		return b, true, nil
	}
	var found []byte
	err = eachTarMember(archive, func(hdr *tar.Header, r io.Reader) (bool, error) {
		if hdr.Name != imageFilename || hdr.Typeflag != tar.TypeReg {
			return false, nil
		}
		b, err := readMember(hdr, r)
		found = b
		return true, err
	})
	if err != nil {
		return nil, false, err
	}
	if found == nil {
		return nil, false, fmt.Errorf("%s: no member %s", path.Base(archive), imageFilename)
	}
	b, err := imageOrGunzipped(found)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %s: %w", path.Base(archive), imageFilename, err)
	}
	return b, false, nil
}

// imageOrGunzipped returns b if it decodes as an image, else b gunzipped,
// which must decode as an image (ILSVRC2010 gzips some of its JPEGs).
func imageOrGunzipped(b []byte) ([]byte, error) {
	if _, _, err := image.DecodeConfig(bytes.NewReader(b)); err == nil {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("neither an image nor gzipped: %w", err)
	}
	u, err := io.ReadAll(io.LimitReader(zr, maxMember+1))
	if err != nil {
		return nil, fmt.Errorf("gunzipping: %w", err)
	}
	if len(u) > maxMember {
		return nil, fmt.Errorf("too large")
	}
	if _, _, err := image.DecodeConfig(bytes.NewReader(u)); err != nil {
		return nil, fmt.Errorf("gunzipped, not an image: %w", err)
	}
	return u, nil
}

// eachTarMember calls f for each member of a tar archive, gzipped or not
// (Fuel's tar_open), until f reports it is done.
func eachTarMember(archive string, f func(hdr *tar.Header, r io.Reader) (bool, error)) error {
	file, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer file.Close()
	br := bufio.NewReader(file)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", path.Base(archive), err)
		}
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: not a readable tar archive: %w", path.Base(archive), err)
		}
		done, err := f(hdr, tr)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path.Base(archive), hdr.Name, err)
		}
		if done {
			return nil
		}
	}
}

// readMember reads a tar member, bounded by maxMember.
func readMember(hdr *tar.Header, r io.Reader) ([]byte, error) {
	if hdr.Size > maxMember {
		return nil, fmt.Errorf("%d bytes: too large", hdr.Size)
	}
	return io.ReadAll(r)
}
