package mainloop

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/blocks-go/blocks/nd"
)

// Log files: JSON lines and CSV.
//
// JSON lines: the first line is the header {"uuid": ..., "status": {...}},
// then one line per row, {"iteration": N, "records": {...}}, in
// increasing iteration order. Numbers and one-element arrays are JSON
// numbers (NaN and infinities the strings "nan", "inf", "-inf"), other
// arrays nested lists, bools, strings and nil as themselves, lists and
// tuples arrays, dicts objects (keys as text).
//
// CSV: a header "iteration,<record>,..." with every record name that holds
// a number or a bool in some row (sorted), then one line per row; a cell
// is empty where the row has no such record.

// JSONValue is how a log value is written to JSON.
func JSONValue(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int, int64:
		return x
	case float32:
		return jsonFloat(float64(x))
	case float64:
		return jsonFloat(x)
	case []int:
		return x
	case *nd.Array:
		if x == nil {
			return nil
		}
		if x.NDim() == 0 {
			return jsonFloat(x.Flat(0))
		}
		return nested(x.Float64s(), x.Shape)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONValue(e)
		}
		return out
	case Tuple:
		return JSONValue([]any(x))
	case Dict:
		// A JSON object: its keys as text (encoding/json sorts them).
		out := make(map[string]any, len(x.Keys))
		for i, k := range x.Keys {
			ks, ok := k.(string)
			if !ok {
				ks = fmt.Sprint(JSONValue(k))
			}
			out[ks] = JSONValue(x.Values[i])
		}
		return out
	case fmt.Stringer:
		return x.String()
	case error:
		return x.Error()
	}
	return fmt.Sprint(v)
}

func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return f
}

func nested(data []float64, shape []int) any {
	if len(shape) == 1 {
		out := make([]any, len(data))
		for i, f := range data {
			out[i] = jsonFloat(f)
		}
		return out
	}
	n := nd.Prod(shape[1:])
	out := make([]any, shape[0])
	for i := range out {
		out[i] = nested(data[i*n:(i+1)*n], shape[1:])
	}
	return out
}

type jsonHeader struct {
	UUID   string         `json:"uuid"`
	Status map[string]any `json:"status"`
}

type jsonRow struct {
	Iteration int            `json:"iteration"`
	Records   map[string]any `json:"records"`
}

// StatusMap is the status as a map of JSON-ready values.
func (l *TrainingLog) StatusMap() map[string]any {
	m := map[string]any{}
	for _, k := range l.Status.Keys() {
		v, _ := l.Status.Get(k)
		m[k] = JSONValue(v)
	}
	return m
}

// WriteJSONLines writes the log as JSON lines: the status, then one line
// per iteration that has records (an iteration without any, as most are
// when nothing is monitored after every batch, has no line: reading the
// file back gives the same log, whose missing rows are empty).
func (l *TrainingLog) WriteJSONLines(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(jsonHeader{UUID: l.UUID, Status: l.StatusMap()}); err != nil {
		return fmt.Errorf("writing the log header: %w", err)
	}
	for _, it := range l.Iterations() {
		if len(l.rows[it]) == 0 {
			continue
		}
		rec := map[string]any{}
		for k, v := range l.rows[it] {
			rec[k] = JSONValue(v)
		}
		if err := enc.Encode(jsonRow{Iteration: it, Records: rec}); err != nil {
			return fmt.Errorf("writing the log row %d: %w", it, err)
		}
	}
	return bw.Flush()
}

// FromJSON is fromJSON for values decoded with json.Decoder.UseNumber.
func FromJSON(v any) any { return fromJSON(v) }

// fromJSON turns a decoded JSON value back into a log value: numbers to
// float64 (int for integral status counters is the caller's business),
// "nan"/"inf"/"-inf" to floats, lists of numbers to arrays.
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.Atoi(string(x)); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case string:
		switch x {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
		return x
	case []any:
		if a, ok := arrayOf(x); ok {
			return a
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromJSON(e)
		}
		return out
	}
	return v
}

// arrayOf reads nested lists of numbers as a float64 array.
func arrayOf(x []any) (*nd.Array, bool) {
	var shape []int
	var data []float64
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		switch y := v.(type) {
		case []any:
			if depth == len(shape) {
				shape = append(shape, len(y))
			} else if depth > len(shape) || shape[depth] != len(y) {
				return false
			}
			for _, e := range y {
				if !walk(e, depth+1) {
					return false
				}
			}
			return true
		case json.Number:
			if depth != len(shape) {
				return false
			}
			f, err := y.Float64()
			data = append(data, f)
			return err == nil
		case string:
			f, ok := fromJSON(y).(float64)
			data = append(data, f)
			return ok && depth == len(shape)
		}
		return false
	}
	if len(x) == 0 || !walk(x, 0) {
		return nil, false
	}
	return nd.FromSlice(data, shape...), true
}

// ReadJSONLines reads a log written by WriteJSONLines. Row values come
// back as float64, int, bool, string, nil or float64 arrays.
func ReadJSONLines(r io.Reader) (*TrainingLog, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var head map[string]any
	if err := dec.Decode(&head); err != nil {
		return nil, fmt.Errorf("reading the log header: %w", err)
	}
	l := &TrainingLog{rows: map[int]Row{}}
	l.UUID, _ = head["uuid"].(string)
	st, _ := head["status"].(map[string]any)
	for k, v := range st {
		gv := fromJSON(v)
		if k == StatusEpochEnds {
			var ends []int
			if a, ok := gv.(*nd.Array); ok {
				for _, f := range a.Float64s() {
					ends = append(ends, int(f))
				}
			}
			gv = ends
		}
		if err := l.Status.Set(k, gv); err != nil {
			return nil, fmt.Errorf("reading the log status: %w", err)
		}
	}
	for line := 2; ; line++ {
		var row struct {
			Iteration *int           `json:"iteration"`
			Records   map[string]any `json:"records"`
		}
		err := dec.Decode(&row)
		if err == io.EOF {
			return l, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the log, line %d: %w", line, err)
		}
		if row.Iteration == nil || *row.Iteration < 0 {
			return nil, fmt.Errorf("reading the log, line %d: no iteration", line)
		}
		r, _ := l.Row(*row.Iteration)
		for k, v := range row.Records {
			r[k] = fromJSON(v)
		}
	}
}

// scalarCell is a CSV cell for v, or ok false when v is no number or bool.
func scalarCell(v any) (string, bool) {
	if b, ok := v.(bool); ok {
		if b {
			return "True", true
		}
		return "False", true
	}
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	case *nd.Array:
		if x == nil || x.Size() != 1 {
			return "", false
		}
		if x.DType() == nd.Float32 {
			return strconv.FormatFloat(x.Flat(0), 'g', -1, 32), true
		}
		f = x.Flat(0)
	default:
		return "", false
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true
}

// WriteCSV writes the numeric and boolean records of the log as CSV, one
// line per iteration that has at least one of them.
func (l *TrainingLog) WriteCSV(w io.Writer) error {
	cols := map[string]bool{}
	for _, r := range l.rows {
		for k, v := range r {
			if _, ok := scalarCell(v); ok {
				cols[k] = true
			}
		}
	}
	names := make([]string, 0, len(cols))
	for k := range cols {
		names = append(names, k)
	}
	slices.Sort(names)
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"iteration"}, names...)); err != nil {
		return err
	}
	for _, it := range l.Iterations() {
		rec := []string{strconv.Itoa(it)}
		r := l.rows[it]
		has := false
		for _, k := range names {
			c, ok := scalarCell(r[k])
			rec = append(rec, c)
			has = has || ok
		}
		if !has {
			continue
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Channel returns the iterations at which record name holds a number,
// with the values, in increasing iteration order (what a plot draws).
func (l *TrainingLog) Channel(name string) (iterations []int, values []float64) {
	for _, it := range l.Iterations() {
		v, ok := l.rows[it][name]
		if !ok {
			continue
		}
		if f, ok := ChannelValue(v); ok {
			iterations = append(iterations, it)
			values = append(values, f)
		}
	}
	return iterations, values
}

// ChannelValue reads a log value as a point of a channel (what a plot
// draws): a number or a one-element array; not a bool, which LogNumber
// reads as 0 or 1.
func ChannelValue(v any) (float64, bool) {
	if _, isBool := v.(bool); isBool {
		return 0, false
	}
	return LogNumber(v)
}

// LogNumber reads a log value as a number: Go numbers, bools and
// one-element arrays. ok is false for anything else.
func LogNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case *nd.Array:
		if x != nil && x.Size() == 1 {
			return x.Flat(0), true
		}
	}
	return 0, false
}

// SetRow replaces the row of iteration i (used by log readers).
func (l *TrainingLog) SetRow(i int, r Row) error {
	if i < 0 {
		return fmt.Errorf("time must be a non-negative integer, got %d", i)
	}
	if l.rows == nil {
		l.rows = map[int]Row{}
	}
	l.rows[i] = r
	return nil
}
