package mainloop

import (
	"fmt"
	"reflect"

	"github.com/blocks-go/blocks/nd"
)

// Batch is one item of an epoch: source name → array (Fuel's
// get_epoch_iterator(as_dict=True)).
type Batch = map[string]*nd.Array

// Callback names a point of the main loop where extensions are called
// (Blocks' CallbackName).
type Callback string

// The callbacks, as Blocks names them. OnInterrupt is part of the
// interface, as in Blocks, but Blocks' main loop never calls it and
// neither does this one.
const (
	BeforeTraining Callback = "before_training"
	BeforeEpoch    Callback = "before_epoch"
	BeforeBatch    Callback = "before_batch"
	AfterBatch     Callback = "after_batch"
	AfterEpoch     Callback = "after_epoch"
	AfterTraining  Callback = "after_training"
	OnResumption   Callback = "on_resumption"
	OnInterrupt    Callback = "on_interrupt"
	OnError        Callback = "on_error"
)

// Callbacks lists every callback.
var Callbacks = []Callback{BeforeTraining, BeforeEpoch, BeforeBatch, AfterBatch, AfterEpoch,
	AfterTraining, OnResumption, OnInterrupt, OnError}

// Valid reports whether c is one of the callbacks.
func (c Callback) Valid() bool {
	for _, k := range Callbacks {
		if c == k {
			return true
		}
	}
	return false
}

// Extension is Blocks' TrainingExtension: callbacks the main loop invokes,
// in the order of MainLoop.Extensions. An error from a callback stops
// training as an exception does in Blocks. Embed *TrainingExtension (or
// TrainingExtension) to get no-op callbacks and override the ones needed.
type Extension interface {
	// Name distinguishes extensions of one main loop (by default the
	// extension's type name).
	Name() string
	// SetMainLoop gives the extension its main loop; the main loop calls
	// it when training starts.
	SetMainLoop(m *MainLoop)

	BeforeTraining() error
	BeforeEpoch() error
	BeforeBatch(batch Batch) error
	AfterBatch(batch Batch) error
	AfterEpoch() error
	AfterTraining() error
	OnResumption() error
	OnInterrupt() error
	// OnError receives the error that stopped training.
	OnError(err error) error
}

// StatefulExtension is an extension with state of its own between
// callbacks (TrainingDataMonitoring's partial aggregates), which
// checkpoints save and restore: arrays in groups, each array nil or not.
type StatefulExtension interface {
	Extension
	CheckpointState() ([][]*nd.Array, error)
	RestoreCheckpointState([][]*nd.Array) error
}

// TrainingExtension is the base of extensions: a name, the main loop, and
// callbacks that do nothing.
type TrainingExtension struct {
	// ExtensionName is the name; empty means the type name of the
	// extension that embeds this one (see ExtensionName).
	ExtensionName string
	loop          *MainLoop
	// renamed says SetName changed the name; class is the name before.
	renamed bool
	class   string
}

// Name is ExtensionName.
func (e *TrainingExtension) Name() string { return e.ExtensionName }

// SetName sets the name (Blocks' name argument). The name before the
// first SetName stays the extension's class (ExtensionClass).
func (e *TrainingExtension) SetName(name string) {
	if !e.renamed {
		e.renamed, e.class = true, e.ExtensionName
	}
	e.ExtensionName = name
}

// className is the name before the first SetName; ok is false when the
// extension was never renamed.
func (e *TrainingExtension) className() (class string, ok bool) { return e.class, e.renamed }

// SetMainLoop records the main loop.
func (e *TrainingExtension) SetMainLoop(m *MainLoop) { e.loop = m }

// MainLoop is the main loop the extension belongs to, or an error before
// one was assigned (Blocks' "main loop must be assigned to extension
// first").
func (e *TrainingExtension) MainLoop() (*MainLoop, error) {
	if e.loop == nil {
		return nil, fmt.Errorf("main loop must be assigned to extension first")
	}
	return e.loop, nil
}

// The callbacks do nothing.
func (e *TrainingExtension) BeforeTraining() error         { return nil }
func (e *TrainingExtension) BeforeEpoch() error            { return nil }
func (e *TrainingExtension) BeforeBatch(batch Batch) error { return nil }
func (e *TrainingExtension) AfterBatch(batch Batch) error  { return nil }
func (e *TrainingExtension) AfterEpoch() error             { return nil }
func (e *TrainingExtension) AfterTraining() error          { return nil }
func (e *TrainingExtension) OnResumption() error           { return nil }
func (e *TrainingExtension) OnInterrupt() error            { return nil }
func (e *TrainingExtension) OnError(err error) error       { return nil }

// ExtensionName is ext.Name(), or the name of ext's type when that is
// empty (Blocks' default name is the class name).
func ExtensionName(ext Extension) string {
	if n := ext.Name(); n != "" {
		return n
	}
	return typeName(ext)
}

// typeName is the name of ext's type, pointers left out.
func typeName(ext Extension) string {
	t := reflect.TypeOf(ext)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// ExtensionClass is the class of ext: the name it had before SetName
// renamed it (the name its constructor gave, or its type's name), or
// ExtensionName(ext) when it was never renamed.
func ExtensionClass(ext Extension) string {
	if c, ok := ext.(interface{ className() (string, bool) }); ok {
		if class, renamed := c.className(); renamed {
			if class != "" {
				return class
			}
			return typeName(ext)
		}
	}
	return ExtensionName(ext)
}

// Dispatch calls ext's callback cb; batch is passed to the batch
// callbacks and err to OnError.
func Dispatch(ext Extension, cb Callback, batch Batch, err error) error {
	switch cb {
	case BeforeTraining:
		return ext.BeforeTraining()
	case BeforeEpoch:
		return ext.BeforeEpoch()
	case BeforeBatch:
		return ext.BeforeBatch(batch)
	case AfterBatch:
		return ext.AfterBatch(batch)
	case AfterEpoch:
		return ext.AfterEpoch()
	case AfterTraining:
		return ext.AfterTraining()
	case OnResumption:
		return ext.OnResumption()
	case OnInterrupt:
		return ext.OnInterrupt()
	case OnError:
		return ext.OnError(err)
	}
	return fmt.Errorf("%q is not a valid callback", string(cb))
}
