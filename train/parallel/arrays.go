package parallel

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/blocks-go/blocks/nd"
)

// RawBytes is the memory of a numeric array (a copy for bool arrays; nil
// for object arrays).
func RawBytes(a *nd.Array) []byte {
	if d, ok := a.Data.([]bool); ok {
		out := make([]byte, len(d))
		for i, x := range d {
			if x {
				out[i] = 1
			}
		}
		return out
	}
	return nd.RawBytes(a)
}

// AppendArrays appends the encoding of arrays (numeric or bool) to b:
// their count, then per array the dtype, the shape and the bytes.
func AppendArrays(b []byte, arrays []*nd.Array) ([]byte, error) {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(arrays)))
	for _, a := range arrays {
		if a.DType() == nd.Object {
			return nil, errors.New("parallel: an array of arrays cannot be sent")
		}
		b = append(b, byte(a.DType()), byte(len(a.Shape)))
		for _, d := range a.Shape {
			b = binary.LittleEndian.AppendUint64(b, uint64(d))
		}
		b = append(b, RawBytes(a)...)
	}
	return b, nil
}

// ReadArrays decodes what AppendArrays wrote at the start of b and returns
// the rest of b.
func ReadArrays(b []byte) ([]*nd.Array, []byte, error) {
	bad := errors.New("parallel: a truncated array message")
	if len(b) < 4 {
		return nil, nil, bad
	}
	n := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	out := make([]*nd.Array, n)
	for i := range out {
		if len(b) < 2 {
			return nil, nil, bad
		}
		dt, nd0 := nd.DType(b[0]), int(b[1])
		if !dt.IsNumeric() {
			return nil, nil, fmt.Errorf("parallel: an array message with dtype %s", dt)
		}
		b = b[2:]
		if len(b) < 8*nd0 {
			return nil, nil, bad
		}
		shape := make([]int, nd0)
		for k := range shape {
			shape[k] = int(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		a := nd.New(dt, shape...)
		raw := RawBytes(a)
		size := len(raw)
		if dt == nd.Bool {
			size = a.Size()
		}
		if len(b) < size {
			return nil, nil, bad
		}
		if dt == nd.Bool {
			bs := a.Data.([]bool)
			for k := range bs {
				bs[k] = b[k] != 0
			}
		} else {
			copy(raw, b[:size])
		}
		b = b[size:]
		out[i] = a
	}
	return out, b, nil
}

// GatherBytes gives every process the byte strings of all processes (of
// any lengths), in rank order.
func GatherBytes(comm Comm, mine []byte) ([][]byte, error) {
	n := comm.Size()
	if n == 1 {
		return [][]byte{mine}, nil
	}
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(mine)))
	lens := make([]byte, 8*n)
	if err := comm.Allgather(l[:], lens); err != nil {
		return nil, fmt.Errorf("parallel: gathering lengths: %w", err)
	}
	m := 0
	for r := range n {
		m = max(m, int(binary.LittleEndian.Uint64(lens[8*r:])))
	}
	send := make([]byte, m)
	copy(send, mine)
	all := make([]byte, m*n)
	if err := comm.Allgather(send, all); err != nil {
		return nil, fmt.Errorf("parallel: gathering: %w", err)
	}
	out := make([][]byte, n)
	for r := range n {
		out[r] = all[r*m : r*m+int(binary.LittleEndian.Uint64(lens[8*r:]))]
	}
	return out, nil
}
