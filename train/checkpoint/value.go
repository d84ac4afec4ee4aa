package checkpoint

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/nd/npy"
	"github.com/blocks-go/blocks/train/mainloop"
)

// Value is a log or status value in JSON, tagged with its Go type so that
// it comes back as the same type and, for numbers, the same bits.
type Value struct {
	// Type is none, bool, int, int64, float64, float32, string, ints,
	// list, tuple, dict (its keys and values alternating in Values), array
	// or repr (a value of another type, kept as text).
	Type   string          `json:"t"`
	V      json.RawMessage `json:"v,omitempty"`
	DType  string          `json:"dtype,omitempty"`
	Shape  []int           `json:"shape,omitempty"`
	Values []Value         `json:"items,omitempty"`
}

func raw(x any) json.RawMessage {
	b, _ := json.Marshal(x)
	return b
}

// EncodeValue tags v.
func EncodeValue(v any) Value {
	switch x := v.(type) {
	case nil:
		return Value{Type: "none"}
	case bool:
		return Value{Type: "bool", V: raw(x)}
	case int:
		return Value{Type: "int", V: raw(x)}
	case int64:
		return Value{Type: "int64", V: raw(strconv.FormatInt(x, 10))}
	case float64:
		return Value{Type: "float64", V: raw(strconv.FormatUint(math.Float64bits(x), 16))}
	case float32:
		return Value{Type: "float32", V: raw(strconv.FormatUint(uint64(math.Float32bits(x)), 16))}
	case string:
		return Value{Type: "string", V: raw(x)}
	case []int:
		return Value{Type: "ints", V: raw(x)}
	case []string:
		items := make([]Value, len(x))
		for i, s := range x {
			items[i] = EncodeValue(s)
		}
		return Value{Type: "list", Values: items}
	case []any:
		return Value{Type: "list", Values: encodeValues(x)}
	case mainloop.Tuple:
		return Value{Type: "tuple", Values: encodeValues(x)}
	case mainloop.Dict:
		items := make([]Value, 0, 2*len(x.Keys))
		for i, k := range x.Keys {
			items = append(items, EncodeValue(k), EncodeValue(x.Values[i]))
		}
		return Value{Type: "dict", Values: items}
	case *nd.Array:
		return Value{Type: "array", DType: x.DType().String(), Shape: append([]int{}, x.Shape...),
			V: raw(base64.StdEncoding.EncodeToString(arrayBytes(x)))}
	}
	return Value{Type: "repr", V: raw(fmt.Sprint(v))}
}

func encodeValues(l []any) []Value {
	items := make([]Value, len(l))
	for i, s := range l {
		items[i] = EncodeValue(s)
	}
	return items
}

// Decode returns the Go value v encodes.
func (v Value) Decode() (any, error) {
	bad := func(err error) (any, error) { return nil, fmt.Errorf("a %s value: %w", v.Type, err) }
	switch v.Type {
	case "none":
		return nil, nil
	case "bool":
		var b bool
		if err := json.Unmarshal(v.V, &b); err != nil {
			return bad(err)
		}
		return b, nil
	case "int":
		var n int
		if err := json.Unmarshal(v.V, &n); err != nil {
			return bad(err)
		}
		return n, nil
	case "int64", "float64", "float32":
		var s string
		if err := json.Unmarshal(v.V, &s); err != nil {
			return bad(err)
		}
		if v.Type == "int64" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return bad(err)
			}
			return n, nil
		}
		bits, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			return bad(err)
		}
		if v.Type == "float32" {
			return math.Float32frombits(uint32(bits)), nil
		}
		return math.Float64frombits(bits), nil
	case "string", "repr":
		var s string
		if err := json.Unmarshal(v.V, &s); err != nil {
			return bad(err)
		}
		return s, nil
	case "ints":
		var l []int
		if err := json.Unmarshal(v.V, &l); err != nil {
			return bad(err)
		}
		return l, nil
	case "list", "tuple", "dict":
		out := make([]any, len(v.Values))
		for i, it := range v.Values {
			x, err := it.Decode()
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		switch v.Type {
		case "tuple":
			return mainloop.Tuple(out), nil
		case "dict":
			if len(out)%2 != 0 {
				return bad(fmt.Errorf("%d items, want key and value pairs", len(out)))
			}
			d := mainloop.Dict{}
			for i := 0; i < len(out); i += 2 {
				d.Keys = append(d.Keys, out[i])
				d.Values = append(d.Values, out[i+1])
			}
			return d, nil
		}
		return out, nil
	case "array":
		dt, err := nd.ParseDType(v.DType)
		if err != nil {
			return bad(err)
		}
		var s string
		if err := json.Unmarshal(v.V, &s); err != nil {
			return bad(err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return bad(err)
		}
		a, err := npy.DecodeData(dt, v.Shape, b, binary.LittleEndian)
		if err != nil {
			return bad(err)
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown value type %q", v.Type)
}

// StatusData is the log's status in JSON.
type StatusData struct {
	IterationsDone         int              `json:"iterations_done"`
	EpochsDone             int              `json:"epochs_done"`
	EpochEnds              []int            `json:"_epoch_ends"`
	ResumedFrom            string           `json:"resumed_from"`
	TrainingStarted        bool             `json:"training_started"`
	EpochStarted           bool             `json:"epoch_started"`
	EpochInterruptReceived bool             `json:"epoch_interrupt_received"`
	BatchInterruptReceived bool             `json:"batch_interrupt_received"`
	ReceivedFirstBatch     bool             `json:"received_first_batch"`
	Extra                  map[string]Value `json:"extra,omitempty"`
}

// RowData is one row of the log.
type RowData struct {
	Iteration int              `json:"iteration"`
	Records   map[string]Value `json:"records"`
}

// LogData is the training log in JSON: its UUID, status and rows (in
// increasing iteration order).
type LogData struct {
	UUID   string     `json:"uuid"`
	Status StatusData `json:"status"`
	Rows   []RowData  `json:"rows"`
}

// EncodeLog captures l.
func EncodeLog(l *mainloop.TrainingLog) LogData {
	s := l.Status
	d := LogData{UUID: l.UUID, Status: StatusData{
		IterationsDone: s.IterationsDone, EpochsDone: s.EpochsDone, EpochEnds: append([]int{}, s.EpochEnds...),
		ResumedFrom: s.ResumedFrom, TrainingStarted: s.TrainingStarted, EpochStarted: s.EpochStarted,
		EpochInterruptReceived: s.EpochInterruptReceived, BatchInterruptReceived: s.BatchInterruptReceived,
		ReceivedFirstBatch: s.ReceivedFirstBatch,
	}}
	if len(s.Extra) > 0 {
		d.Status.Extra = map[string]Value{}
		for k, v := range s.Extra {
			d.Status.Extra[k] = EncodeValue(v)
		}
	}
	for _, it := range l.Iterations() {
		r, _ := l.Lookup(it)
		rd := RowData{Iteration: it, Records: map[string]Value{}}
		for k, v := range r {
			rd.Records[k] = EncodeValue(v)
		}
		d.Rows = append(d.Rows, rd)
	}
	return d
}

// Decode rebuilds the log.
func (d LogData) Decode() (*mainloop.TrainingLog, error) {
	l := mainloop.NewTrainingLog()
	l.UUID = d.UUID
	s := d.Status
	l.Status = mainloop.Status{
		IterationsDone: s.IterationsDone, EpochsDone: s.EpochsDone, EpochEnds: append([]int{}, s.EpochEnds...),
		ResumedFrom: s.ResumedFrom, TrainingStarted: s.TrainingStarted, EpochStarted: s.EpochStarted,
		EpochInterruptReceived: s.EpochInterruptReceived, BatchInterruptReceived: s.BatchInterruptReceived,
		ReceivedFirstBatch: s.ReceivedFirstBatch,
	}
	if s.IterationsDone < 0 || s.EpochsDone < 0 {
		return nil, fmt.Errorf("log: negative iteration or epoch count")
	}
	for _, k := range sortedKeys(s.Extra) {
		v, err := s.Extra[k].Decode()
		if err != nil {
			return nil, fmt.Errorf("log: status %s: %w", k, err)
		}
		if l.Status.Extra == nil {
			l.Status.Extra = map[string]any{}
		}
		l.Status.Extra[k] = v
	}
	for _, rd := range d.Rows {
		r, err := l.Row(rd.Iteration)
		if err != nil {
			return nil, fmt.Errorf("log: %w", err)
		}
		for _, k := range sortedKeys(rd.Records) {
			v, err := rd.Records[k].Decode()
			if err != nil {
				return nil, fmt.Errorf("log: row %d, %s: %w", rd.Iteration, k, err)
			}
			r[k] = v
		}
	}
	return l, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
