package blocks

import (
	"fmt"
	"reflect"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/train/mainloop"
)

// duckLog is a script object's log as Blocks' TrainingLog protocol reads
// it (log.status and log.current_row, dicts) kept in step with a Go log:
// Pull copies the object's status and current row into the Go log, Push
// writes into the object the entries the Go side changed since. It serves
// an extension given a duck main loop (extensions_duck.go) and a
// MainLoop's script log (mainloop.LogMirror: log_script.go).
type duckLog struct {
	// statusOf and rowOf read the object's status and current row; a nil
	// value: it has none.
	statusOf, rowOf func() (starlark.Value, error)
	// what prefixes messages: "main_loop.log", "log".
	what string
	// strict: the object is the truth (a MainLoop's log): a status or row
	// that is not a dict is an error, and a record the object's row lost
	// since the last sync leaves the Go row too. Otherwise (a duck main
	// loop) it reads as an empty one, only writing to it an error.
	strict bool
	// noMapping is the error for a write where the object has no status
	// or row (part "status" or "current_row"); nil: a generic one.
	noMapping func(part, key string) error

	// What both sides held at the last sync: the Go values (Push writes
	// what differs) and the object's (Pull reads what differs, so that a
	// value the Go side wrote keeps its Go type).
	goStatus, goRow map[string]any
	stStatus, stRow map[string]starlark.Value
	// rowIter is the iteration of the synced current row.
	rowIter int
}

// mapping is v's entries; ok is false when v is not a mapping.
func (d *duckLog) items(v starlark.Value, part string) ([]starlark.Tuple, error) {
	if v == nil {
		return nil, nil
	}
	if m, ok := v.(starlark.IterableMapping); ok {
		return m.Items(), nil
	}
	if d.strict {
		return nil, fmt.Errorf("%s.%s must be a dict, got %s", d.what, part, v.Type())
	}
	// A value that is not a mapping (a Mock's attribute made when first
	// read) reads as an empty one: as in Python, only using it is an
	// error (Push's write).
	return nil, nil
}

// ownView tells v, a status or row the object gave, that is log's own
// (a TrainingLog subclass's override that returns the base's): nothing
// to copy, and copying would turn the log's values into their script
// forms.
func ownView(v starlark.Value, log *mainloop.TrainingLog) bool {
	switch x := v.(type) {
	case *statusView:
		return x.s == &log.Status
	case *LogRow:
		return x.R != nil && reflect.ValueOf(x.R).UnsafePointer() == reflect.ValueOf(log.CurrentRow()).UnsafePointer()
	}
	return false
}

// sameValue tells a value of the object unchanged since the last sync.
func sameValue(old, v starlark.Value) bool {
	if old == v {
		return true
	}
	eq, err := starlark.Equal(old, v)
	return err == nil && eq
}

// Pull brings log in step with the object after a call that may have
// changed either: what the Go side changed since the last sync goes to
// the object first, then what the object changed comes into log (its
// status, then its current row).
func (d *duckLog) Pull(log *mainloop.TrainingLog) error {
	if d.goStatus != nil {
		if err := d.Push(log); err != nil {
			return err
		}
	}
	return d.pull(log)
}

func (d *duckLog) pull(log *mainloop.TrainingLog) error {
	statusV, err := d.statusOf()
	if err != nil {
		return err
	}
	if ownView(statusV, log) {
		statusV = nil
	}
	sItems, err := d.items(statusV, "status")
	if err != nil {
		return err
	}
	sv := &statusView{s: &log.Status}
	for _, kv := range sItems {
		k, _ := starlark.AsString(kv[0])
		if old, ok := d.stStatus[k]; ok && sameValue(old, kv[1]) {
			continue
		}
		if err := sv.SetKey(kv[0], kv[1]); err != nil {
			return fmt.Errorf("%s.status: %w", d.what, err)
		}
	}
	rowV, err := d.rowOf()
	if err != nil {
		return err
	}
	if ownView(rowV, log) {
		d.snapshot(log, sItems, nil)
		return nil
	}
	rItems, err := d.items(rowV, "current_row")
	if err != nil {
		return err
	}
	row := log.CurrentRow()
	sameRow := d.rowIter == log.Status.IterationsDone && d.stRow != nil
	lr := &LogRow{R: row}
	seen := make(map[string]bool, len(rItems))
	for _, kv := range rItems {
		k, _ := starlark.AsString(kv[0])
		seen[k] = true
		if old, ok := d.stRow[k]; sameRow && ok && sameValue(old, kv[1]) {
			continue
		}
		if err := lr.SetKey(kv[0], kv[1]); err != nil {
			return fmt.Errorf("%s.current_row: %w", d.what, err)
		}
	}
	if d.strict && sameRow {
		for k := range d.stRow {
			if !seen[k] {
				delete(row, k)
			}
		}
	}
	d.snapshot(log, sItems, rItems)
	return nil
}

// snapshot records what both sides hold now.
func (d *duckLog) snapshot(log *mainloop.TrainingLog, sItems, rItems []starlark.Tuple) {
	d.goStatus = make(map[string]any, len(log.Status.Keys()))
	for _, k := range log.Status.Keys() {
		d.goStatus[k], _ = log.Status.Get(k)
	}
	row := log.CurrentRow()
	d.goRow = make(map[string]any, len(row))
	for k, v := range row {
		d.goRow[k] = v
	}
	d.rowIter = log.Status.IterationsDone
	d.stStatus = make(map[string]starlark.Value, len(sItems))
	for _, kv := range sItems {
		k, _ := starlark.AsString(kv[0])
		d.stStatus[k] = kv[1]
	}
	d.stRow = make(map[string]starlark.Value, len(rItems))
	for _, kv := range rItems {
		k, _ := starlark.AsString(kv[0])
		d.stRow[k] = kv[1]
	}
}

// set writes key into the object's mapping m (part "status" or
// "current_row").
func (d *duckLog) set(m starlark.Value, part, k string, v any) (starlark.Value, error) {
	if m == nil {
		if d.noMapping != nil {
			return nil, d.noMapping(part, k)
		}
		return nil, fmt.Errorf("%s has no %s (the log was given %s[%q])", d.what, part, part, k)
	}
	s, ok := m.(starlark.HasSetKey)
	if !ok {
		return nil, fmt.Errorf("%s.%s: cannot set %q in %s (a dict is wanted)", d.what, part, k, m.Type())
	}
	sv := goValue(v)
	if err := s.SetKey(starlark.String(k), sv); err != nil {
		return nil, fmt.Errorf("%s.%s[%q]: %w", d.what, part, k, err)
	}
	return sv, nil
}

// Push writes into the object the status entries, then the current
// row's records, that the Go side changed since the last sync. The row
// is read after the status: when the iteration moved on, the object's
// current row is the new iteration's, and gets all its records.
func (d *duckLog) Push(log *mainloop.TrainingLog) error {
	statusV, err := d.statusOf()
	if err != nil {
		return err
	}
	ownStatus := ownView(statusV, log)
	if d.stStatus == nil {
		d.stStatus = map[string]starlark.Value{}
	}
	for _, k := range log.Status.Keys() {
		v, _ := log.Status.Get(k)
		if old, ok := d.goStatus[k]; ownStatus || ok && reflect.DeepEqual(old, v) {
			continue
		}
		sv, err := d.set(statusV, "status", k, v)
		if err != nil {
			return err
		}
		d.stStatus[k] = sv
		if d.goStatus == nil {
			d.goStatus = map[string]any{}
		}
		d.goStatus[k] = v
	}
	row := log.CurrentRow()
	fresh := d.rowIter != log.Status.IterationsDone || d.goRow == nil
	var rowV starlark.Value
	if len(row) > 0 || fresh {
		if rowV, err = d.rowOf(); err != nil {
			return err
		}
	}
	own := ownView(rowV, log)
	if fresh || own {
		d.goRow, d.stRow = map[string]any{}, map[string]starlark.Value{}
		d.rowIter = log.Status.IterationsDone
	}
	if own {
		return nil
	}
	if fresh {
		items, err := d.items(rowV, "current_row")
		if err != nil {
			return err
		}
		for _, kv := range items { // the object's new row as it is
			k, _ := starlark.AsString(kv[0])
			d.stRow[k] = kv[1]
		}
	}
	for _, k := range sortedKeys(row) {
		v := row[k]
		if old, ok := d.goRow[k]; ok && reflect.DeepEqual(old, v) {
			continue
		}
		sv, err := d.set(rowV, "current_row", k, v)
		if err != nil {
			return err
		}
		d.goRow[k], d.stRow[k] = v, sv
	}
	return nil
}
