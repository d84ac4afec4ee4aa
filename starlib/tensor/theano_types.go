package tensor

import (
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
)

// theanoTypesModules adds Theano's tensor types to the module tensor
// (theano.tensor):
//
//	TensorType(dtype, broadcastable, name=None)
//	    a type of variables: dtype ("floatX" or a dtype name) and one bool
//	    per axis (the IR keeps the number of axes; a True entry, Theano's
//	    size-1 axis, is not enforced); calling it, t() or t(name), makes an
//	    input variable of that type
//	tensor5, ftensor5, dtensor5, itensor5, ltensor5 (name=None, dtype=None)
//	    5-d inputs, as tensor4 and its kind
func theanoTypesModules() []*starlarkstruct.Module {
	members := starlark.StringDict{
		"TensorType": starlib.NewBuiltin("TensorType", newTensorType),
	}
	for _, kind := range []struct {
		prefix string
		dtype  *nd.DType
	}{{"", nil}, {"f", ptr(nd.Float32)}, {"d", ptr(nd.Float64)}, {"i", ptr(nd.Int32)}, {"l", ptr(nd.Int64)}} {
		name := kind.prefix + "tensor5"
		members[name] = inputBuiltin(name, kind.dtype, 5)
	}
	return []*starlarkstruct.Module{
		{Name: "tensor", Members: members},
		{Name: "theano.tensor", Members: members},
	}
}

// TensorType is theano.tensor.TensorType: a dtype and a broadcastable
// pattern; calling it makes an input variable.
type TensorType struct {
	dtype         starlib.DTypeArg
	broadcastable []bool
	name          string
}

var _ starlark.Callable = (*TensorType)(nil)

func newTensorType(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var t TensorType
	var bc starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dtype", &t.dtype, "broadcastable", &bc, "name??", &t.name); err != nil {
		return nil, err
	}
	if !t.dtype.IsSet() {
		return nil, fmt.Errorf("TensorType: dtype must be a dtype name, got None")
	}
	items, ok := starlib.Elems(bc)
	if !ok {
		return nil, fmt.Errorf("TensorType: broadcastable must be a list or tuple of bools, got %s", bc.Type())
	}
	for i, it := range items {
		v, ok := it.(starlark.Bool)
		if !ok {
			return nil, fmt.Errorf("TensorType: broadcastable[%d] must be a bool, got %s", i, it.Type())
		}
		t.broadcastable = append(t.broadcastable, bool(v))
	}
	return &t, nil
}

func (t *TensorType) String() string {
	parts := make([]string, len(t.broadcastable))
	for i, b := range t.broadcastable {
		parts[i] = "False"
		if b {
			parts[i] = "True"
		}
	}
	return fmt.Sprintf("TensorType(%s, %s)", t.dtype.Name, nd.TupleString(parts))
}
func (t *TensorType) Type() string          { return "TensorType" }
func (t *TensorType) Name() string          { return "TensorType" }
func (t *TensorType) Freeze()               {}
func (t *TensorType) Truth() starlark.Bool  { return true }
func (t *TensorType) Hash() (uint32, error) { return starlark.String(t.String()).Hash() }

// CallInternal makes an input variable of the type: t(name=None).
func (t *TensorType) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	name := t.name
	if err := starlark.UnpackArgs(t.String(), args, kwargs, "name??", &name); err != nil {
		return nil, err
	}
	return starlib.NewVariable(thread, core.NewInput(name, *t.dtype.Get(thread), len(t.broadcastable))), nil
}
