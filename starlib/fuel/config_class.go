package fuel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/starlib"
)

// fuel.config_parser's Configuration class, as Fuel's:
//
//	Configuration()
//	    an empty configuration: settings are declared with add_config, then
//	    read and assigned as attributes
//	c.add_config(key, type_, default=<none>, env_var=None)
//	    declares the setting key; reading it gives type_(v) for the first v of:
//	    the value the script assigned (c.key = v), the environment variable
//	    env_var, the value load_yaml read, default; none of them is Fuel's
//	    ConfigurationError ("Configuration not set and no default provided")
//	c.load_yaml()
//	    reads $FUEL_CONFIG, else ~/.fuelrc, when it is a file: each of its keys
//	    must have been declared ("Unrecognized config in YAML")
//	c.config
//	    Fuel's table: a dict of each declared key to a dict of what is known of
//	    it ("type", and "env_var", "default", "yaml", "value" when set)
//	multiple_paths_parser(value), extra_downloader_converter(value)
//	    Fuel's type_ functions of data_path and extra_downloaders/converters
//
// Assigning an undeclared name stores it as a plain attribute, as Python
// does. type_ is any callable (int, str, float, a function of the
// script's, the two parsers above); it is called on the thread that made
// the configuration.

// configSetting is one declared setting (Fuel's config[key] dict).
type configSetting struct {
	typ                  starlark.Callable
	envVar               string
	hasEnv               bool
	def, yaml, value     starlark.Value
	hasDef, hasYAML, set bool
}

// configuration is a Configuration() value.
type configuration struct {
	thread   *starlark.Thread
	settings map[string]*configSetting
	order    []string
	attrs    map[string]starlark.Value
}

var (
	_ starlark.HasSetField = (*configuration)(nil)
	_ starlark.HasAttrs    = (*configuration)(nil)
)

func (c *configuration) String() string        { return "<fuel.config_parser.Configuration>" }
func (c *configuration) Type() string          { return "Configuration" }
func (c *configuration) Freeze()               {} // settable, as Fuel's
func (c *configuration) Truth() starlark.Bool  { return true }
func (c *configuration) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: Configuration") }

func (c *configuration) AttrNames() []string {
	names := []string{"add_config", "config", "load_yaml"}
	names = append(names, c.order...)
	for k := range c.attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	return slices.Compact(names)
}

func (c *configuration) Attr(name string) (starlark.Value, error) {
	switch name {
	case "add_config":
		return starlib.NewBuiltin("add_config", c.addConfig), nil
	case "load_yaml":
		return starlib.NewBuiltin("load_yaml", c.loadYAML), nil
	case "config":
		return c.table(), nil
	}
	if s, ok := c.settings[name]; ok {
		return getSetting(c.thread, name, s)
	}
	if v, ok := c.attrs[name]; ok {
		return v, nil
	}
	return nil, nil
}

// getSetting is Fuel's Configuration.__getattr__ of a declared setting:
// type_ of the assigned value, else the environment variable's, else the
// YAML file's, else the default, called on thread.
func getSetting(thread *starlark.Thread, name string, s *configSetting) (starlark.Value, error) {
	var v starlark.Value
	if s.set {
		v = s.value
	} else if env, ok := os.LookupEnv(s.envVar); s.hasEnv && ok {
		v = starlark.String(env)
	} else if s.hasYAML {
		v = s.yaml
	} else if s.hasDef {
		v = s.def
	} else {
		return nil, fmt.Errorf("ConfigurationError: Configuration not set and no default provided: %s.", name)
	}
	if thread == nil {
		return nil, fmt.Errorf("Configuration.%s: read outside a running script", name)
	}
	out, err := starlark.Call(thread, s.typ, starlark.Tuple{v}, nil)
	if err != nil {
		return nil, fmt.Errorf("Configuration.%s: %s(%s): %w", name, typeName(s.typ), v.String(), err)
	}
	return out, nil
}

func typeName(f starlark.Callable) string { return f.Name() }

// SetField is Fuel's Configuration.__setattr__: a declared setting takes
// the value (converted by type_ when read), any other name becomes an
// attribute.
func (c *configuration) SetField(name string, v starlark.Value) error {
	switch name {
	case "add_config", "load_yaml", "config":
		return fmt.Errorf("Configuration.%s cannot be assigned", name)
	}
	if s, ok := c.settings[name]; ok {
		s.value, s.set = v, true
		return nil
	}
	c.attrs[name] = v
	return nil
}

// table is Fuel's Configuration.config: each declared key's dict.
func (c *configuration) table() *starlark.Dict {
	d := starlark.NewDict(len(c.order))
	for _, k := range c.order {
		s := c.settings[k]
		e := starlark.NewDict(5)
		e.SetKey(starlark.String("type"), s.typ)
		if s.hasEnv {
			e.SetKey(starlark.String("env_var"), starlark.String(s.envVar))
		}
		if s.hasDef {
			e.SetKey(starlark.String("default"), s.def)
		}
		if s.hasYAML {
			e.SetKey(starlark.String("yaml"), s.yaml)
		}
		if s.set {
			e.SetKey(starlark.String("value"), s.value)
		}
		d.SetKey(starlark.String(k), e)
	}
	return d
}

// addConfig is Configuration.add_config(key, type_, default=NOT_SET,
// env_var=None).
func (c *configuration) addConfig(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	key, s, err := parseAddConfig(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if _, ok := c.settings[key]; !ok {
		c.order = append(c.order, key)
	}
	// Fuel replaces the setting's whole dict: an assigned value or a
	// YAML value of an earlier declaration is forgotten.
	c.settings[key] = s
	delete(c.attrs, key)
	return starlark.None, nil
}

// parseAddConfig reads add_config's arguments into a new setting.
func parseAddConfig(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (string, *configSetting, error) {
	var key string
	var typ starlark.Callable
	var def starlark.Value
	var env starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "key", &key, "type_", &typ, "default?", &def, "env_var?", &env); err != nil {
		return "", nil, err
	}
	if !isIdentifier(key) {
		return "", nil, fmt.Errorf("%s: key %q is not a valid attribute name (letters, digits and underscores)", b.Name(), key)
	}
	switch key {
	case "add_config", "load_yaml", "config":
		return "", nil, fmt.Errorf("%s: %q is a method of the configuration, not a setting name", b.Name(), key)
	}
	s := &configSetting{typ: typ}
	if env != starlark.None {
		e, ok := starlark.AsString(env)
		if !ok {
			return "", nil, fmt.Errorf("%s: env_var must be a string or None, got %s", b.Name(), env.Type())
		}
		s.envVar, s.hasEnv = e, true
	}
	if def != nil {
		s.def, s.hasDef = def, true
	}
	return key, s, nil
}

// loadYAML is Configuration.load_yaml(): the file $FUEL_CONFIG names,
// else ~/.fuelrc, when it is a file.
func (c *configuration) loadYAML(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	path := config.ConfigFile()
	if path == "" {
		return starlark.None, nil
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !st.Mode().IsRegular() {
		return starlark.None, nil // Fuel: os.path.isfile
	}
	if err := starlib.CheckRead(thread, path); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	vals, err := config.ParseYAML(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", b.Name(), path, err)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := c.settings[k]; !ok {
			return nil, fmt.Errorf("%s: %s: ValueError: Unrecognized config in YAML: %s", b.Name(), path, k)
		}
	}
	for _, k := range keys {
		s := c.settings[k]
		s.yaml, s.hasYAML = yamlValue(vals[k]), true
	}
	return starlark.None, nil
}

// yamlValue is a configuration file's value as yaml.safe_load gives it: a
// list of scalars or a scalar, each an int, float, bool, None or string
// by its plain-scalar form.
func yamlValue(v config.YAMLValue) starlark.Value {
	if v.IsList {
		if v.List == nil {
			return starlark.None // `key:` with nothing under it
		}
		items := make([]starlark.Value, len(v.List))
		for i, s := range v.List {
			items[i] = yamlScalar(s)
		}
		return starlark.NewList(items)
	}
	return yamlScalar(v.Scalar)
}

func yamlScalar(s string) starlark.Value {
	switch config.ScalarKind(s) {
	case "bool":
		switch strings.ToLower(s) {
		case "true", "yes", "on":
			return starlark.True
		}
		return starlark.False
	case "null":
		return starlark.None
	case "int":
		if n, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
			return starlark.MakeInt64(n)
		}
	case "float":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return starlark.Float(f)
		}
	}
	return starlark.String(s)
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// newConfiguration is fuel.config_parser.Configuration().
func newConfiguration(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return &configuration{thread: thread, settings: map[string]*configSetting{}, attrs: map[string]starlark.Value{}}, nil
}

// multiplePathsParser is Fuel's multiple_paths_parser(value): a string
// split on ':' (os.pathsep), anything else as it is.
func multiplePathsParser(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &v); err != nil {
		return nil, err
	}
	if s, ok := v.(starlark.String); ok {
		return starlib.StringList(strings.Split(string(s), string(os.PathListSeparator))), nil
	}
	return v, nil
}
