package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/docs"
	"github.com/blocks-go/blocks/nd"
	"github.com/blocks-go/blocks/starlib"
	starblocks "github.com/blocks-go/blocks/starlib/blocks"
)

// command runs a :command line and reports whether the session should end.
func (s *session) command(line string) (quit bool) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	needArg := func(what string) bool {
		if arg == "" {
			fmt.Fprintf(s.errw, "%s needs %s (:help for help)\n", name, what)
			return false
		}
		return true
	}
	switch name {
	case ":quit", ":q", ":exit":
		return true
	case ":help", ":h":
		s.help(arg)
	case ":load":
		if needArg("a FILE") {
			s.load(arg)
		}
	case ":reset":
		if err := s.reset(); err != nil {
			fmt.Fprintf(s.errw, "blocks-repl: %v\n", err)
		} else {
			fmt.Fprintln(s.out, "session reset: every global is gone")
		}
	case ":type":
		if needArg("an EXPR") {
			if v, ok := s.value(arg); ok {
				fmt.Fprintln(s.out, typeOf(v))
			}
		}
	case ":shape":
		if needArg("an EXPR") {
			if v, ok := s.value(arg); ok {
				fmt.Fprintln(s.out, shapeOf(v))
			}
		}
	case ":info":
		if needArg("an EXPR") {
			if v, ok := s.value(arg); ok {
				fmt.Fprintln(s.out, s.info(v))
			}
		}
	case ":save":
		if needArg("a FILE") {
			if err := s.save(arg); err != nil {
				fmt.Fprintf(s.errw, "blocks-repl: %v\n", err)
			} else {
				fmt.Fprintf(s.out, "saved %d inputs to %s (run it with: blocks-repl run %s)\n", len(s.accepted), arg, arg)
			}
		}
	default:
		fmt.Fprintf(s.errw, "unknown command %s (:help for help)\n", name)
	}
	return false
}

// value evaluates an expression for :type, :shape and :info.
func (s *session) value(expr string) (starlark.Value, bool) {
	v, err := s.eval("<stdin>", expr+"\n")
	if err != nil {
		fmt.Fprintln(s.errw, starlib.Backtrace(err))
		return nil, false
	}
	return v, true
}

// help prints the session help, or what a name is: the signature of a
// Blocks class from its table, its documentation (the sections of docs/*.md that document it), the names a module
// exports, or a value's type and attributes.
func (s *session) help(name string) {
	if name == "" {
		fmt.Fprint(s.out, replHelp)
		fmt.Fprintf(s.out, "\nmodules: %s\n", strings.Join(s.interp.Library().Names(), ", "))
		return
	}
	printed := false
	key := name
	if v, ok := s.interp.Globals[name]; ok {
		key = docKey(v, name)
	}
	if sigs, ok := starblocks.ClassSignature(key); ok {
		// Blocks' signature, from the class's table (the constructor's own data).
		fmt.Fprintf(s.out, "%s\n\n", strings.Join(sigs, "\n"))
		printed = true
	}
	for _, sec := range docs.Lookup(key) {
		fmt.Fprintf(s.out, "%s\n(docs/%s)\n\n", sec.Text, sec.File)
		printed = true
	}
	if m, ok := s.interp.Library().Lookup(name); ok {
		names := m.AttrNames()
		sort.Strings(names)
		fmt.Fprintf(s.out, "module %s: %s\n", name, strings.Join(names, ", "))
		printed = true
	}
	if v, ok := s.interp.Globals[name]; ok && !printed {
		fmt.Fprintln(s.out, s.info(v))
		printed = true
	}
	if !printed {
		fmt.Fprintf(s.errw, "no documentation, module or global named %q\n", name)
	}
}

// docKey is the name under which a value is documented: a builtin's or a
// brick class's name rather than the global's.
func docKey(v starlark.Value, name string) string {
	switch v := v.(type) {
	case *starlark.Builtin:
		return v.Name()
	case *starblocks.Brick:
		return v.Type()
	case *starblocks.BrickClass:
		return v.Name()
	}
	return name
}

// info describes a value: its type, its description and its attributes.
func (s *session) info(v starlark.Value) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s", typeOf(v), starlib.Describe(v))
	if h, ok := v.(starlark.HasAttrs); ok {
		names := h.AttrNames()
		sort.Strings(names)
		if len(names) > 0 {
			fmt.Fprintf(&b, "\nattributes: %s", strings.Join(names, ", "))
		}
	}
	return b.String()
}

// typeOf names a value's type; a symbolic variable also shows its dtype
// and number of dimensions, as Theano's TensorType does.
func typeOf(v starlark.Value) string {
	switch v := v.(type) {
	case *starlib.Variable:
		return fmt.Sprintf("%s: %s", v.Type(), v.V.TypeString())
	case *starlib.Array:
		return fmt.Sprintf("ndarray: %s, %d dimensions", v.A.DType(), v.A.NDim())
	}
	return v.Type()
}

// shapeOf is a value's shape: an array's, a shared variable's value's,
// each parameter's for a brick; a symbolic variable's shape is known only
// when it is computed, so its number of dimensions is shown.
func shapeOf(v starlark.Value) string {
	switch v := v.(type) {
	case *starlib.Array:
		return nd.ShapeString(v.A.Shape)
	case *starlib.Variable:
		if a := v.V.Value(); a != nil {
			return nd.ShapeString(a.Shape)
		}
		return fmt.Sprintf("%d dimensions (the shape is known when the variable is computed: %s.eval({...}).shape)", v.V.NDim(), v.V.String())
	case *starblocks.Brick:
		return v.Describe()
	}
	if h, ok := v.(starlark.HasAttrs); ok {
		if sh, err := h.Attr("shape"); err == nil && sh != nil {
			return sh.String()
		}
	}
	return fmt.Sprintf("a %s has no shape", v.Type())
}

// save writes the accepted inputs as a script, atomically.
func (s *session) save(path string) error {
	text := s.script("")
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".save-*.star")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes 0600; a script is an ordinary output (0644, less
	// the umask, as os.Create would make it).
	if err := os.Chmod(tmp.Name(), os.FileMode(0o644&^umask())); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
