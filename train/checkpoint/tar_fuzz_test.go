package checkpoint

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// tarMembers splits an encoded checkpoint into its members.
func tarMembers(t *testing.T, data []byte) (names []string, datas [][]byte) {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		names, datas = append(names, h.Name), append(datas, b)
	}
}

// bombNPZ is an .npz whose one member declares a float32 array of
// declared elements and inflates to inflated bytes of data (deflated).
func bombNPZ(declared int, inflated int) []byte {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "W.npy", Method: zip.Deflate})
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }", declared)
	hdr += strings.Repeat(" ", (64-(10+len(hdr)+1)%64)%64) + "\n"
	_, _ = w.Write(append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8)))
	_, _ = w.Write([]byte(hdr))
	_, _ = w.Write(make([]byte, inflated))
	_ = zw.Close()
	return zbuf.Bytes()
}

// FuzzTarStructure rebuilds a valid checkpoint with one member's tar
// header forged: its type, a declared size larger or smaller than its
// content (the file then truncated), PAX sparse records declaring a huge
// real size, or the parameters' .npz replaced by a deflated array whose
// stream inflates to more or less than its header declares. Decode must
// refuse each without a panic and without allocating much more than the
// file's size (64 MiB here, for files under 64 KiB).
func FuzzTarStructure(f *testing.F) {
	good := goodCheckpoint(f)
	f.Add(uint8(0), byte('0'), int64(0), false, uint16(0), uint16(0))
	f.Add(uint8(3), byte('0'), int64(1<<32), false, uint16(0), uint16(0))
	f.Add(uint8(1), byte('0'), int64(0), true, uint16(0), uint16(0))
	f.Add(uint8(4), byte('S'), int64(0), false, uint16(0), uint16(0))
	f.Add(uint8(0), byte('0'), int64(-3), false, uint16(2), uint16(4096))
	f.Add(uint8(0), byte('0'), int64(0), false, uint16(2), uint16(65535))
	f.Fuzz(func(t *testing.T, which uint8, typeflag byte, sizeDelta int64, sparse bool, declared, inflatedKiB uint16) {
		names, datas := tarMembers(t, good)
		if inflatedKiB > 0 {
			for i, n := range names {
				if n == MemberParameters {
					// At most 8 MiB: a larger stream only slows the
					// fuzzer (an input over ~10 s counts as a hang).
					datas[i] = bombNPZ(int(declared), int(inflatedKiB%8192)<<10)
				}
			}
		}
		k := int(which) % len(names)
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i, n := range names {
			h := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(datas[i])), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
			body := datas[i]
			if i == k {
				if typeflag != 0 && typeflag != tar.TypeReg {
					h.Typeflag = typeflag
				}
				if sizeDelta != 0 && sizeDelta > -h.Size && sizeDelta < 1<<40 {
					h.Size += sizeDelta
					if sizeDelta < 0 {
						body = body[:h.Size]
					}
				}
				if sparse {
					h.PAXRecords = map[string]string{"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
						"GNU.sparse.name": n, "GNU.sparse.realsize": fmt.Sprint(int64(1) << 34)}
				}
			}
			if err := tw.WriteHeader(h); err != nil {
				return // a header the writer refuses cannot be in a file it wrote
			}
			_, _ = tw.Write(body)
			if h.Size > int64(len(body)) {
				break // the file ends inside the member: truncated
			}
		}
		_ = tw.Flush()
		data := buf.Bytes()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, err := Decode(data)
		runtime.ReadMemStats(&after)
		checkDecoded(t, c, err)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20+uint64(64*len(data)) {
			t.Fatalf("Decode of a %d-byte file allocated %d bytes", len(data), grew)
		}
	})
}
