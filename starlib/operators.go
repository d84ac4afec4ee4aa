package starlib

import (
	"fmt"
	"reflect"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/blocks-go/blocks/core"
)

// Theano's and numpy's operators where Starlark's interpreter has no hook:
//
//   - x < y, x <= y, x > y, x >= y are elementwise when x or y is a
//     symbolic variable or an array (Theano's and numpy's __lt__ ...): a
//     uint8 variable, a bool array. Starlark's interpreter compares any
//     two values into a bool, so a script's ordered comparisons are
//     rewritten, once parsed, into calls of hidden builtins that do
//     Starlark's own comparison on other values.
//   - x == y and x != y are rewritten too, only so that a numpy scalar
//     (scalar.go) equals the equal number (numpy.float32(1) == 1.0); on
//     everything else they are Starlark's (identity on variables, as
//     Theano's; tensor.eq and neq are elementwise).
//   - x[a:b:c] on a symbolic variable: Starlark slices only values whose
//     length it knows, with int bounds. The slice is rewritten into a call
//     that indexes a variable with slice(a, b, c) (a, b ints or int
//     scalar variables computed from shapes) and slices other values as
//     Starlark does. x[i, j, a:b], which Starlark parses as the slice
//     (i, j, a):b, is the index x[i, j, slice(a, b)], as in Python (a
//     slice elsewhere than last, x[:, 0], stays a syntax error: write
//     x[":", 0]).
//
//   - x[i], i in x, {i: v} and "%d" % i, where i is an integer numpy
//     scalar (scalar.go): Python calls i.__index__() wherever it needs an
//     int, Starlark's interpreter wants its own int. A key that is not a
//     literal is rewritten into $index(i), which gives the equal int for
//     an integer numpy scalar and i itself for anything else; a string
//     literal's % operator into $percent, which gives %d, %f and the
//     other number conversions a numpy scalar's number.
//
// The hidden builtins' names ($lt, ..., $slice) cannot be written in a
// script, so a script's own names never meet them.

// hiddenOperators are the builtins the rewritten operators call, added to
// every interpreter's predeclared names.
func hiddenOperators() starlark.StringDict {
	d := starlark.StringDict{
		"$slice": NewBuiltin("slice", sliceOperator), "$sliceobj": NewBuiltin("slice", sliceBuiltin),
		"$index": starlark.NewBuiltin("index", indexOperator), "$percent": NewBuiltin("%", percentOperator),
	}
	for _, op := range []syntax.Token{syntax.LT, syntax.LE, syntax.GT, syntax.GE, syntax.EQL, syntax.NEQ} {
		d[hiddenCompareName(op)] = NewBuiltin(op.String(), compareOperator(op))
	}
	return d
}

func hiddenCompareName(op syntax.Token) string { return "$" + rewrittenCompares[op] }

// rewrittenCompares are the comparison operators rewritten into calls:
// the ordered ones (elementwise on variables and arrays), == and != (a
// numpy scalar equals the equal number: scalar.go).
var rewrittenCompares = map[syntax.Token]string{
	syntax.LT: "lt", syntax.LE: "le", syntax.GT: "gt", syntax.GE: "ge", syntax.EQL: "eq", syntax.NEQ: "ne",
}

// HiddenGlobal reports whether a global name is one of the hidden operators
// (never listed to a user: completion, dir of the session).
func HiddenGlobal(name string) bool { return len(name) > 0 && name[0] == '$' }

// rewriteOperators rewrites a parsed file's (or expression's) ordered
// comparisons and slices into calls of the hidden operators, keeping their
// positions (an error points at the operator or the bracket).
func rewriteOperators(node syntax.Node) {
	rewriteValue(reflect.ValueOf(node))
}

// rewriteValue walks the exported fields of a syntax node, replacing each
// expression by its rewrite.
func rewriteValue(v reflect.Value) {
	exprType := reflect.TypeFor[syntax.Expr]()
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			rewriteValue(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			f := v.Field(i)
			if f.Type() == exprType && !f.IsNil() && f.CanSet() {
				rewriteValue(f)
				if r := rewriteExpr(f.Interface().(syntax.Expr)); r != nil {
					f.Set(reflect.ValueOf(r))
				}
				continue
			}
			rewriteValue(f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Type() == exprType && !e.IsNil() {
				rewriteValue(e)
				if r := rewriteExpr(e.Interface().(syntax.Expr)); r != nil {
					e.Set(reflect.ValueOf(r))
				}
				continue
			}
			rewriteValue(e)
		}
	}
}

// rewriteExpr is the call that replaces e, or nil to keep e.
func rewriteExpr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		switch e.Op {
		case syntax.IN, syntax.NOT_IN:
			e.X = indexKey(e.X, e.OpPos)
			return nil
		case syntax.PERCENT:
			if lit, ok := e.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
				return &syntax.CallExpr{
					Fn:     &syntax.Ident{NamePos: e.OpPos, Name: "$percent"},
					Lparen: e.OpPos, Args: []syntax.Expr{e.X, e.Y}, Rparen: e.OpPos,
				}
			}
			return nil
		}
		if _, ok := rewrittenCompares[e.Op]; ok {
			return &syntax.CallExpr{
				Fn:     &syntax.Ident{NamePos: e.OpPos, Name: hiddenCompareName(e.Op)},
				Lparen: e.OpPos, Args: []syntax.Expr{e.X, e.Y}, Rparen: e.OpPos,
			}
		}
	case *syntax.IndexExpr:
		e.Y = indexKey(e.Y, e.Lbrack)
	case *syntax.DictEntry:
		e.Key = indexKey(e.Key, e.Colon)
	case *syntax.SliceExpr:
		none := func(x syntax.Expr) syntax.Expr {
			if x == nil {
				return &syntax.Ident{NamePos: e.Lbrack, Name: "None"}
			}
			return x
		}
		if t, ok := e.Lo.(*syntax.TupleExpr); ok && !t.Lparen.IsValid() && len(t.List) > 0 {
			// x[i, a:b] parses as the slice (i, a):b: it is the index
			// (i, slice(a, b)), as in Python.
			n := len(t.List)
			last := &syntax.CallExpr{
				Fn:     &syntax.Ident{NamePos: e.Lbrack, Name: "$sliceobj"},
				Lparen: e.Lbrack, Args: []syntax.Expr{t.List[n-1], none(e.Hi), none(e.Step)}, Rparen: e.Rbrack,
			}
			list := append(append([]syntax.Expr(nil), t.List[:n-1]...), last)
			return &syntax.IndexExpr{X: e.X, Lbrack: e.Lbrack, Y: &syntax.TupleExpr{List: list}, Rbrack: e.Rbrack}
		}
		return &syntax.CallExpr{
			Fn:     &syntax.Ident{NamePos: e.Lbrack, Name: "$slice"},
			Lparen: e.Lbrack, Args: []syntax.Expr{e.X, none(e.Lo), none(e.Hi), none(e.Step)}, Rparen: e.Rbrack,
		}
	}
	return nil
}

// indexKey is the key k of an index, a membership test or a dict entry
// as rewritten: $index(k), or k itself where it is a literal or a tuple
// (a tuple indexes an array or a variable, whose Get takes numpy
// scalars).
func indexKey(k syntax.Expr, pos syntax.Position) syntax.Expr {
	switch k := k.(type) {
	case *syntax.Literal, *syntax.TupleExpr:
		return k
	case *syntax.CallExpr:
		if id, ok := k.Fn.(*syntax.Ident); ok && id.Name == "$index" {
			return k // rewritten already
		}
	}
	return &syntax.CallExpr{
		Fn:     &syntax.Ident{NamePos: pos, Name: "$index"},
		Lparen: pos, Args: []syntax.Expr{k}, Rparen: pos,
	}
}

// indexOperator is $index(k): IndexValue(k). (A plain builtin: it cannot
// fail or panic.)
func indexOperator(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return IndexValue(args[0]), nil
}

// percentOperator is format % args for a string literal format: Starlark's
// own, with a numpy scalar given to a number conversion (%d, %i, %o, %x,
// %X, %e, %E, %f, %F, %g, %G, %c) as its number, as Python does; %s and
// %r keep numpy's str.
func percentOperator(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	format, y := args[0], args[1]
	return starlark.Binary(syntax.PERCENT, format, scalarFormatArgs(string(format.(starlark.String)), y))
}

// scalarFormatArgs are the arguments y of format with each numpy scalar
// that a number conversion consumes replaced by its number (y itself
// when there is none).
func scalarFormatArgs(format string, y starlark.Value) starlark.Value {
	hasScalar := false
	switch y := y.(type) {
	case *Scalar:
		hasScalar = true
	case starlark.Tuple:
		for _, v := range y {
			if _, ok := v.(*Scalar); ok {
				hasScalar = true
			}
		}
	case *starlark.Dict:
		for _, kv := range y.Items() {
			if _, ok := kv[1].(*Scalar); ok {
				hasScalar = true
			}
		}
	}
	if !hasScalar {
		return y
	}
	// Walk the conversions: %% consumes nothing, %(name)c a dict value,
	// %c the next item.
	var named []string
	var numeric []bool
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		name := ""
		if i < len(format) && format[i] == '(' {
			j := strings.IndexByte(format[i:], ')')
			if j < 0 {
				return y // Starlark reports the error
			}
			name, i = format[i+1:i+j], i+j+1
		}
		for i < len(format) && strings.IndexByte("#0- +.0123456789", format[i]) >= 0 {
			i++
		}
		if i >= len(format) {
			break
		}
		if format[i] == '%' {
			continue
		}
		named = append(named, name)
		numeric = append(numeric, strings.IndexByte("diouxXeEfFgGc", format[i]) >= 0)
	}
	number := func(v starlark.Value, conv bool) starlark.Value {
		if s, ok := v.(*Scalar); ok && conv {
			return s.Number()
		}
		return v
	}
	switch y := y.(type) {
	case *Scalar:
		return number(y, len(numeric) > 0 && numeric[0])
	case starlark.Tuple:
		out := make(starlark.Tuple, len(y))
		for k, v := range y {
			out[k] = number(v, k < len(numeric) && numeric[k])
		}
		return out
	case *starlark.Dict:
		out := starlark.NewDict(y.Len())
		for _, kv := range y.Items() {
			conv := false
			if key, ok := kv[0].(starlark.String); ok {
				for k, n := range named {
					conv = conv || n == string(key) && numeric[k]
				}
			}
			if err := out.SetKey(kv[0], number(kv[1], conv)); err != nil {
				return y
			}
		}
		return out
	}
	return y
}

// elementwise reports whether x is a value whose ordered comparisons are
// elementwise.
func elementwise(x starlark.Value) bool {
	switch x.(type) {
	case *Variable, *Array:
		return true
	case *Scalar: // with an array or a variable, the 0-d array's
		return true
	}
	return false
}

// compareOperator is x OP y: elementwise (Variable's or Array's Binary
// for OP) when x or y is a variable or an array, else Starlark's own.
func compareOperator(op syntax.Token) BuiltinFunc {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		x, y := args[0], args[1]
		if op == syntax.EQL || op == syntax.NEQ {
			eq, err := Equal(x, y)
			return starlark.Bool(eq == (op == syntax.EQL)), err
		}
		if r, ok := scalarCompare(op, x, y); ok {
			return starlark.Bool(r), nil
		}
		if !elementwise(x) && !elementwise(y) {
			ok, err := starlark.Compare(op, x, y)
			if err != nil {
				return nil, err
			}
			return starlark.Bool(ok), nil
		}
		if r, err := elementwiseCompare(thread, op, x, y); r != nil || err != nil {
			if v, ok := r.(*Variable); ok {
				return NewVariable(thread, v.V), nil // the run's annotations
			}
			return r, err
		}
		return nil, fmt.Errorf("%s %s %s not implemented", x.Type(), op, y.Type())
	}
}

// sliceOperator is x[lo:hi:step].
func sliceOperator(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	x, lo, hi, step := args[0], args[1], args[2], args[3]
	_, isVar := x.(*Variable)
	symbolic := false
	for _, v := range []starlark.Value{lo, hi, step} {
		if _, ok := v.(*Variable); ok {
			symbolic = true
		}
	}
	if isVar || symbolic {
		s := &SliceValue{Start: lo, Stop: hi, Step: step}
		m, ok := x.(starlark.Mapping)
		if !ok {
			return nil, fmt.Errorf("invalid slice operand %s (a slice with symbolic bounds indexes a symbolic variable)", x.Type())
		}
		if a, isArr := x.(*Array); isArr {
			m = NewVariable(thread, core.NewConstant(a.A))
		}
		r, _, err := m.Get(s)
		return r, err
	}
	return starlarkSlice(x, lo, hi, step)
}

// starlarkSlice is Starlark's (and Python's) x[lo:hi:step] of a value
// whose length is known.
func starlarkSlice(x, lo, hi, stepV starlark.Value) (starlark.Value, error) {
	s, ok := x.(starlark.Sliceable)
	if !ok {
		return nil, fmt.Errorf("invalid slice operand %s", x.Type())
	}
	n := s.Len()
	step := 1
	lo, hi, stepV = IndexValue(lo), IndexValue(hi), IndexValue(stepV)
	if stepV != starlark.None {
		var err error
		if step, err = starlark.AsInt32(IndexValue(stepV)); err != nil {
			return nil, fmt.Errorf("invalid slice step: %s", err)
		}
		if step == 0 {
			return nil, fmt.Errorf("zero is not a valid slice step")
		}
	}
	// Python's rule: a negative bound counts from the end; bounds are then
	// clamped to [0, n] going forwards, [-1, n-1] going backwards.
	bound := func(v starlark.Value, what string, def int) (int, error) {
		if v == starlark.None {
			return def, nil
		}
		i, err := starlark.AsInt32(IndexValue(v))
		if err != nil {
			return 0, fmt.Errorf("invalid %s index: %s", what, err)
		}
		if i < 0 {
			i += n
		}
		lowest, highest := 0, n
		if step < 0 {
			lowest, highest = -1, n-1
		}
		return min(max(i, lowest), highest), nil
	}
	startDef, endDef := 0, n
	if step < 0 {
		startDef, endDef = n-1, -1
	}
	start, err := bound(lo, "start", startDef)
	if err != nil {
		return nil, err
	}
	end, err := bound(hi, "end", endDef)
	if err != nil {
		return nil, err
	}
	if step > 0 && end < start || step < 0 && end > start {
		end = start // empty
	}
	return s.Slice(start, end, step), nil
}

// elementwiseCompare is x op y with a variable or an array among them, as
// the interpreter does arithmetic: x's Binary, else y's.
func elementwiseCompare(thread *starlark.Thread, op syntax.Token, x, y starlark.Value) (starlark.Value, error) {
	if b, ok := x.(starlark.HasBinary); ok {
		if r, err := b.Binary(op, y, starlark.Left); r != nil || err != nil {
			return r, err
		}
	}
	if b, ok := y.(starlark.HasBinary); ok {
		if r, err := b.Binary(op, x, starlark.Right); r != nil || err != nil {
			return r, err
		}
	}
	return nil, nil
}
