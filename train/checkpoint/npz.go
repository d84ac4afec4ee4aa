package checkpoint

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
)

// Named is an array with its key in an .npz file.
type Named struct {
	Name  string
	Array *nd.Array
}

// arrayBytes is a's data as little-endian bytes (C order), as an .npy
// file holds them; nil for a dtype numpy's format does not carry here.
func arrayBytes(a *nd.Array) []byte {
	b, _ := npy.AppendData(nil, a, binary.LittleEndian)
	return b
}

// npzTime is the modification time of every member: fixed, so that the
// same arrays always give the same bytes.
var npzTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// EncodeNPZ writes arrays as numpy.savez does: a zip archive (stored, not
// compressed) with one NAME.npy member per array, in the given order.
// numpy.load(f)[NAME] reads each back.
func EncodeNPZ(arrays []Named) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeNPZ(&buf, arrays); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeNPZ reads an .npz archive (stored or deflated members, C or
// Fortran order is refused) into arrays, in the archive's order.
func DecodeNPZ(data []byte) ([]Named, error) {
	return decodeNPZ(bytes.NewReader(data), int64(len(data)))
}

// decodeNPZ is DecodeNPZ of the size bytes of r, read as the arrays need
// them.
func decodeNPZ(r io.ReaderAt, size int64) ([]Named, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("npz: %w", err)
	}
	var out []Named
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, fmt.Errorf("npz: member %q is not an .npy file", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", name, err)
		}
		a, err := npy.Read(rc, f.UncompressedSize64)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("npz: %s: %w", name, err)
		}
		out = append(out, Named{name, a})
	}
	return out, nil
}
