package transformers

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// TestImageHeaderBombRefused: a PNG of a hundred bytes whose header declares
// 1,000,000 × 1,000,000 pixels is refused from its header, before the
// decoder allocates the picture.
func TestImageHeaderBombRefused(t *testing.T) {
	var png bytes.Buffer
	png.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 1000000)
	binary.BigEndian.PutUint32(ihdr[4:], 1000000)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk := append([]byte("IHDR"), ihdr...)
	binary.Write(&png, binary.BigEndian, uint32(len(ihdr)))
	png.Write(chunk)
	binary.Write(&png, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	// A little image data, so that the decoder gets as far as allocating.
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 64))
	zw.Close()
	chunk = append([]byte("IDAT"), z.Bytes()...)
	binary.Write(&png, binary.BigEndian, uint32(z.Len()))
	png.Write(chunk)
	binary.Write(&png, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	b := png.Bytes()
	a := nd.New(nd.Uint8, len(b))
	copy(a.Data.([]uint8), b)
	_, err := decodeImage(a, "RGB")
	if err == nil || !strings.Contains(err.Error(), "1000000×1000000 pixels") {
		t.Fatalf("a PNG declaring 10^12 pixels: got %v, want a refusal naming its size", err)
	}
}
