package starlib

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// ConfigModule is the Starlark module blocks.config: the script's
// tunables, which the command line may override (blocks-repl run --set
// lr=0.05 --set hidden=[200, 100] script.star). It is the runtime's own
// module (the overrides are the run's options); package all lists it
// with the others.
//
//	get(name, default=None) - the value given with --set name=VALUE, else
//	    default. VALUE is read as a Starlark literal (int, float, string,
//	    bool, None, list, tuple, dict); text that is not a literal is a
//	    string, so --set name=mnist works unquoted. The override must fit
//	    the default: an int may stand for a float default, a string
//	    default takes the text as it was written, None accepts anything;
//	    any other mismatch is an error. A --set the script has not read
//	    with get (nor declared with config) by its first main_loop.run()
//	    or compiled function is an error there, before anything trains
//	    (config_settings.go).
//	config - Blocks' config object, and the place a script declares its
//	    tunables: cfg = config(learning_rate=0.1, batch_size=256, epochs=1)
//	    returns a struct (cfg.learning_rate) whose values --set overrides,
//	    type-checked against the declared defaults (an undeclared name or
//	    a wrong type is an error naming the declared tunables); the
//	    resolved values go to the log (row 0, record "config") and to
//	    every checkpoint. config.get is the get above; config.default_seed
//	    (Fuel's default_seed, 1 unless .fuelrc sets it), config.floatX (the
//	    run's floatX), config.device (the run's device: Options.Device, which
//	    blocks-repl's --device sets; config.device = "cuda" changes it for
//	    the rest of this run only) and config.log_backend ("python") are
//	    Blocks' settings.
var ConfigModule = &starlarkstruct.Module{
	Name: "blocks.config",
	Members: starlark.StringDict{
		"get":    NewBuiltin("get", configGet),
		"config": &Dynamic{Name: "config", Get: func(thread *starlark.Thread) starlark.Value { return &Config{thread: thread} }},
	},
}

func configGet(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var def starlark.Value = starlark.None
	if err := starlark.UnpackArgs("config.get", args, kwargs, "name", &name, "default?", &def); err != nil {
		return nil, err
	}
	s := state(thread)
	if s == nil {
		return def, nil
	}
	s.mu.Lock()
	s.asked[name] = true
	v, ok := s.overrides[name]
	raw := s.raw[name]
	s.mu.Unlock()
	if !ok {
		s.recordSetting(name, def, false)
		return def, nil
	}
	fit, err := fitOverride(name, raw, v, def)
	if err == nil {
		s.recordSetting(name, fit, true)
	}
	return fit, err
}

// fitOverride checks an override against the default it replaces.
func fitOverride(name, raw string, v, def starlark.Value) (starlark.Value, error) {
	switch def.(type) {
	case starlark.NoneType:
		return v, nil
	case starlark.String:
		if s, ok := v.(starlark.String); ok {
			return s, nil
		}
		return starlark.String(raw), nil
	case starlark.Float:
		if i, ok := v.(starlark.Int); ok {
			return starlark.Float(i.Float()), nil
		}
	case starlark.Tuple:
		if l, ok := v.(*starlark.List); ok {
			t := make(starlark.Tuple, l.Len())
			for i := range t {
				t[i] = l.Index(i)
			}
			return t, nil
		}
	case *starlark.List:
		if t, ok := v.(starlark.Tuple); ok {
			return starlark.NewList(append([]starlark.Value(nil), t...)), nil
		}
	}
	if v.Type() != def.Type() {
		return nil, fmt.Errorf("config.get(%q): --set %s=%s gives %s, but the default %s is %s",
			name, name, raw, article(v.Type()), def, article(def.Type()))
	}
	return v, nil
}

// ParseOverride reads the VALUE of --set NAME=VALUE: a Starlark literal
// (int, float, string, bool, None, and lists, tuples and dicts of them),
// or, when the text is not a literal, the text itself as a string.
func ParseOverride(text string) (starlark.Value, error) {
	expr, err := FileOptions.ParseExpr("<override>", text, 0)
	// A number that does not parse is out of range, not a string
	// (1e400); a shift of numbers is not a value (1<<70).
	// Only a number that overflows is an error: a malformed one (0E, 1.5e)
	// is text like any other.
	if err != nil && (strings.Contains(err.Error(), "invalid float literal") || strings.Contains(err.Error(), "out of range")) && overflows(text) {
		return nil, fmt.Errorf("%s is out of range for a number (a float holds up to about 1.8e308)", text)
	}
	if shiftLike.MatchString(strings.TrimSpace(text)) {
		return nil, fmt.Errorf("%s is an expression, not a literal: write the value itself", text)
	}
	if err != nil || !isLiteral(expr) {
		return starlark.String(text), nil
	}
	v, err := starlark.EvalExprOptions(FileOptions, &starlark.Thread{Name: "override"}, expr, nil)
	if err != nil {
		return starlark.String(text), nil
	}
	return v, nil
}

// floatLike matches the decimal numbers in a text.
var floatLike = regexp.MustCompile(`(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)

// overflows reports whether text holds a decimal number too large for a
// float (1e400).
func overflows(text string) bool {
	for _, m := range floatLike.FindAllString(text, -1) {
		if _, err := strconv.ParseFloat(m, 64); errors.Is(err, strconv.ErrRange) {
			return true
		}
	}
	return false
}

// shiftLike matches a shift of integers (1<<70), which can only be meant
// as a number.
var shiftLike = regexp.MustCompile(`^[-+]?[0-9]+\s*(<<|>>)\s*[0-9]+$`)

func isLiteral(e syntax.Expr) bool {
	ok := true
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case nil: // Walk's end of a node's children
		case *syntax.Literal, *syntax.ListExpr, *syntax.TupleExpr, *syntax.ParenExpr, *syntax.DictExpr, *syntax.DictEntry:
		case *syntax.UnaryExpr:
			if n.Op != syntax.MINUS && n.Op != syntax.PLUS {
				ok = false
			}
		case *syntax.Ident:
			if n.Name != "True" && n.Name != "False" && n.Name != "None" {
				ok = false
			}
		default:
			ok = false
		}
		return ok
	})
	return ok
}
