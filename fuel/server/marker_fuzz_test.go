package server

import (
	"testing"

	"github.com/blocks-go/blocks/nd"
)

// FuzzDecodeMessage feeds messages, marked or not, to DecodeMessage and
// the client's sequence check: errors, never a panic; a marker that comes
// back is well formed.
func FuzzDecodeMessage(f *testing.F) {
	frames, err := EncodeMarked([]*nd.Array{nd.FromSlice([]float32{1, 2, 3, 4}, 2, 2)}, Marker{Server: "ab", Seq: 3, Epoch: 1, Batch: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(frames[0], frames[1], int64(2), 1, 2, false)
	f.Add(StopFrame(&Marker{Server: "ab", Seq: 4, Epoch: 1, Batch: 4, Stop: true}), []byte{}, int64(3), 1, 3, false)
	f.Add([]byte(`{"stop": true, "seq": 1e300, "epoch": -1, "batch": "x", "server": 3}`), []byte{}, int64(0), 1, 0, true)
	f.Fuzz(func(t *testing.T, header, data []byte, lastSeq int64, lastEpoch, lastBatch int, lastStop bool) {
		ff := [][]byte{header}
		if len(data) > 0 {
			ff = append(ff, data)
		}
		_, m, _ := DecodeMessage(ff)
		if m == nil {
			return
		}
		if m.Seq < 0 || m.Epoch < 1 || m.Batch < 0 {
			t.Fatalf("accepted marker %+v", *m)
		}
		s := sequence{last: &Marker{Server: "ab", Seq: lastSeq, Epoch: lastEpoch, Batch: lastBatch, Stop: lastStop}}
		_ = s.check(*m, "X")
	})
}
