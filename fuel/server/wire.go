package server

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
)

// Header is the .npy header of one array as Fuel sends it: numpy's
// header_data_from_array_1_0, {"shape": [...], "fortran_order": false,
// "descr": "<f4"}.
type Header struct {
	Descr        string `json:"descr"`
	FortranOrder bool   `json:"fortran_order"`
	Shape        []int  `json:"shape"`
}

// stopFrame is the one frame that ends an epoch, byte for byte what
// pyzmq's send_json({'stop': True}) sends.
var stopFrame = []byte(`{"stop": true}`)

// EncodeHeaders is the first frame of a batch: the JSON list of the
// arrays' .npy headers, byte for byte what Fuel's send_arrays sends
// through pyzmq's send_json (json.dumps with its default separators and
// numpy's key order: shape, fortran_order, descr).
func EncodeHeaders(arrays []*nd.Array) ([]byte, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range arrays {
		if a == nil {
			return nil, fmt.Errorf("server: array %d is missing", i)
		}
		descr, err := npy.Descr(a.DType(), binary.NativeEndian)
		if err != nil {
			return nil, fmt.Errorf("server: array %d: %w", i, err)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"shape": [`)
		for j, d := range a.Shape {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(d))
		}
		b.WriteString(`], "fortran_order": false, "descr": "`)
		b.WriteString(descr)
		b.WriteString(`"}`)
	}
	b.WriteByte(']')
	return []byte(b.String()), nil
}

// Bytes is the raw C-order bytes of a's elements in this machine's byte
// order: a view of a's data, not a copy.
func Bytes(a *nd.Array) []byte {
	n := a.Size() * a.DType().Size()
	if n == 0 {
		return []byte{}
	}
	var p unsafe.Pointer
	switch d := a.Data.(type) {
	case []float32:
		p = unsafe.Pointer(&d[0])
	case []float64:
		p = unsafe.Pointer(&d[0])
	case []int64:
		p = unsafe.Pointer(&d[0])
	case []int32:
		p = unsafe.Pointer(&d[0])
	case []int16:
		p = unsafe.Pointer(&d[0])
	case []uint16:
		p = unsafe.Pointer(&d[0])
	case []uint8:
		p = unsafe.Pointer(&d[0])
	case []int8:
		p = unsafe.Pointer(&d[0])
	case []bool:
		p = unsafe.Pointer(&d[0])
	default:
		panic(fmt.Sprintf("server: array data of type %T", a.Data))
	}
	return unsafe.Slice((*byte)(p), n)
}

// EncodeArrays is the frames of one batch: the header frame, then one
// frame of raw bytes per array (views of the arrays' data).
func EncodeArrays(arrays []*nd.Array) ([][]byte, error) {
	if len(arrays) == 0 {
		return nil, errors.New("server: a batch with no arrays cannot be sent (Fuel's protocol needs at least one)")
	}
	h, err := EncodeHeaders(arrays)
	if err != nil {
		return nil, err
	}
	frames := make([][]byte, 0, 1+len(arrays))
	frames = append(frames, h)
	for _, a := range arrays {
		frames = append(frames, Bytes(a))
	}
	return frames, nil
}

// ErrStop is what DecodeArrays returns for the {"stop": true} frame that
// ends an epoch.
var ErrStop = errors.New("server: end of epoch")

// DecodeArrays reads one message of Fuel's protocol, as Fuel's
// recv_arrays does: a header frame that is either {"stop": ...}
// (ErrStop) or a JSON list of .npy headers, then one frame per header.
// Every mismatch (bad JSON, a dtype not held here, a frame count or a
// frame size that disagrees with the headers) is an error that says what
// was expected and what came. The arrays may share memory with the
// frames, which the caller gives up.
func DecodeArrays(frames [][]byte) ([]*nd.Array, error) {
	if len(frames) == 0 {
		return nil, errors.New("server: malformed message: no frames")
	}
	first := strings.TrimSpace(string(frames[0]))
	if strings.HasPrefix(first, "{") {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(frames[0], &obj); err != nil {
			return nil, fmt.Errorf("server: malformed header frame (not JSON: %v): %s", err, clip(frames[0]))
		}
		if _, ok := obj["stop"]; ok {
			if len(frames) > 1 {
				return nil, fmt.Errorf("server: malformed message: a stop frame followed by %d more frames", len(frames)-1)
			}
			return nil, ErrStop
		}
		return nil, fmt.Errorf("server: malformed header frame: a JSON object without \"stop\", want a list of .npy headers: %s", clip(frames[0]))
	}
	var headers []Header
	if err := json.Unmarshal(frames[0], &headers); err != nil {
		return nil, fmt.Errorf("server: malformed header frame (want a JSON list of {descr, fortran_order, shape}: %v): %s", err, clip(frames[0]))
	}
	if len(frames)-1 != len(headers) {
		return nil, fmt.Errorf("server: malformed message: %d headers but %d data frames", len(headers), len(frames)-1)
	}
	arrays := make([]*nd.Array, len(headers))
	for i, h := range headers {
		a, err := decodeArray(h, frames[i+1])
		if err != nil {
			return nil, fmt.Errorf("server: array %d of the message: %w", i, err)
		}
		arrays[i] = a
	}
	return arrays, nil
}

func decodeArray(h Header, data []byte) (*nd.Array, error) {
	dt, order, err := npy.ParseDescr(h.Descr)
	if err != nil {
		return nil, err
	}
	if h.Shape == nil {
		return nil, errors.New("the header has no shape")
	}
	shape := append([]int(nil), h.Shape...)
	if h.FortranOrder {
		// The bytes are those of the transposed array, in C order.
		slices.Reverse(shape)
	}
	native := npy.IsLittleEndian(order) == npy.IsLittleEndian(binary.NativeEndian)
	if native && !h.FortranOrder && dt != nd.Bool {
		if n, ok := nd.ProdChecked(shape); ok && n <= math.MaxInt/dt.Size() && n*dt.Size() == len(data) {
			if a := view(dt, shape, data); a != nil {
				return a, nil
			}
		}
	}
	a, err := npy.DecodeData(dt, shape, data, order)
	if err != nil {
		return nil, fmt.Errorf("the data frame: %w", err)
	}
	if h.FortranOrder {
		a = transpose(a)
	}
	return a, nil
}

// view wraps data (owned by the caller, who gives it up) as an array
// without copying, when it is aligned for dt; nil otherwise.
func view(dt nd.DType, shape []int, data []byte) *nd.Array {
	n := len(data) / dt.Size()
	if n == 0 || uintptr(unsafe.Pointer(&data[0]))%uintptr(dt.Size()) != 0 {
		return nil
	}
	p := unsafe.Pointer(&data[0])
	var d any
	switch dt {
	case nd.Float32:
		d = unsafe.Slice((*float32)(p), n)
	case nd.Float64:
		d = unsafe.Slice((*float64)(p), n)
	case nd.Int64:
		d = unsafe.Slice((*int64)(p), n)
	case nd.Int32:
		d = unsafe.Slice((*int32)(p), n)
	case nd.Int16:
		d = unsafe.Slice((*int16)(p), n)
	case nd.Uint16:
		d = unsafe.Slice((*uint16)(p), n)
	case nd.Uint8:
		d = data
	case nd.Int8:
		d = unsafe.Slice((*int8)(p), n)
	default:
		return nil
	}
	return &nd.Array{Shape: shape, Data: d}
}

// transpose reverses the axes of a (numpy's a.T), as a C-order copy.
func transpose(a *nd.Array) *nd.Array {
	nd0 := len(a.Shape)
	if nd0 < 2 {
		return a
	}
	shape := make([]int, nd0)
	for i, d := range a.Shape {
		shape[nd0-1-i] = d
	}
	out := nd.New(a.DType(), shape...)
	src, dst := Bytes(a), Bytes(out)
	size := a.DType().Size()
	if a.DType() == nd.Bool {
		size = 1
	}
	// strides of a, in elements
	strides := make([]int, nd0)
	s := 1
	for i := nd0 - 1; i >= 0; i-- {
		strides[i] = s
		s *= a.Shape[i]
	}
	idx := make([]int, nd0) // index into out
	for k := range out.Size() {
		off := 0
		for i := range nd0 {
			off += idx[i] * strides[nd0-1-i]
		}
		copy(dst[k*size:(k+1)*size], src[off*size:(off+1)*size])
		for i := nd0 - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

func clip(b []byte) string {
	const max = 120
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "..."
	}
	return strconv.Quote(string(b))
}
