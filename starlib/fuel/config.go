package fuel

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/starlark"

	"github.com/blocks-go/blocks/fuel/config"
	"github.com/blocks-go/blocks/numpyrand"
	"github.com/blocks-go/blocks/starlib"
)

// fuel.config's config: Fuel's Configuration. Reading a setting gives the
// value a script assigned, else the environment's, else ~/.fuelrc's
// (FUEL_CONFIG), else the default; assigning one (config.data_path =
// "/data", config.floatX = "float64") sets it for the rest of this run
// or REPL session only: the assignments live on the run's thread, so
// nothing leaks into another run.
//
//	data_path          a list of directories (a string is split on ':', as
//	                   Fuel's multiple_paths_parser); unset: an error, as Fuel
//	floatX             "float32" or "float64"; assigning it sets the run's
//	                   floatX (Cast("floatX"), ForceFloatX, masks, tensor.floatX)
//	default_seed       an int in [0, 2**32): the seed of the generators Fuel
//	                   makes when given none (shuffled schemes, random
//	                   transformers, toy datasets)
//	local_data_path    a string ("" by default)
//	extra_downloaders, extra_converters   lists of module names (a string is
//	                   split on spaces); the project has no plug-in modules
//	any other name     stored and read back, as Fuel's Configuration does
//
// Datasets the script makes afterwards look their files up in the
// assigned data path; in a confined run (a stored checkpoint's script)
// each directory must be one the script may read.

// fuelConfigKey is the thread-local key of a run's *fuelSettings.
const fuelConfigKey = "fuel.config.settings"

// fuelSettings are one run's assignments to fuel.config.
type fuelSettings struct {
	s     config.Settings
	extra map[string]starlark.Value // extra_downloaders, extra_converters, names Fuel does not declare
	// declared are the settings the script added with config.add_config.
	declared map[string]*configSetting
}

// fuelSettingsOf is the run's assignments, created on first use when
// create is set (nil otherwise, when there are none).
func fuelSettingsOf(thread *starlark.Thread, create bool) *fuelSettings {
	if thread == nil {
		return nil
	}
	if s, ok := thread.Local(fuelConfigKey).(*fuelSettings); ok {
		return s
	}
	if !create {
		return nil
	}
	s := &fuelSettings{extra: map[string]starlark.Value{}, declared: map[string]*configSetting{}}
	thread.SetLocal(fuelConfigKey, s)
	return s
}

// FuelSettings are the assignments the thread's script made to
// fuel.config, for the Go fuel packages (nil when it made none).
func FuelSettings(thread *starlark.Thread) *config.Settings {
	if s := fuelSettingsOf(thread, false); s != nil {
		return &s.s
	}
	return nil
}

// fuelDefaultRNG is the generator a Fuel builtin given rng=None uses:
// nil (the Go package's RandomState(config.default_seed)) unless the
// script assigned config.default_seed.
func fuelDefaultRNG(thread *starlark.Thread) *numpyrand.RandomState {
	if s := FuelSettings(thread); s != nil && s.DefaultSeed != nil {
		return numpyrand.New(uint32(*s.DefaultSeed))
	}
	return nil
}

// fuelDefaultSeed is the seed a toy dataset given seed=None uses: nil
// unless the script assigned config.default_seed.
func fuelDefaultSeed(thread *starlark.Thread) *int {
	if s := FuelSettings(thread); s != nil && s.DefaultSeed != nil {
		v := *s.DefaultSeed
		return &v
	}
	return nil
}

// fuelConfig is the config value a script loads: bound to its thread.
type fuelConfig struct{ thread *starlark.Thread }

var (
	_ starlark.HasSetField = fuelConfig{}
	_ starlark.HasAttrs    = fuelConfig{}
)

var fuelConfigNames = []string{"data_path", "default_seed", "extra_converters", "extra_downloaders", "floatX", "local_data_path"}

func (fuelConfig) String() string        { return "<fuel.config_parser.Configuration>" }
func (fuelConfig) Type() string          { return "Configuration" }
func (fuelConfig) Freeze()               {} // settable for the whole run, as Fuel's module-level config
func (fuelConfig) Truth() starlark.Bool  { return true }
func (fuelConfig) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: Configuration") }

func (c fuelConfig) AttrNames() []string {
	names := append([]string{"add_config"}, fuelConfigNames...)
	if s := fuelSettingsOf(c.thread, false); s != nil {
		for k := range s.extra {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
		for k := range s.declared {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	sort.Strings(names)
	return names
}

func (c fuelConfig) Attr(name string) (starlark.Value, error) {
	if name == "add_config" {
		return starlib.NewBuiltin("add_config", c.addConfig), nil
	}
	set := fuelSettingsOf(c.thread, false)
	if set != nil {
		if s, ok := set.declared[name]; ok {
			return getSetting(c.thread, name, s)
		}
		if v, ok := set.extra[name]; ok {
			return v, nil
		}
	}
	cfg, err := FuelSettings(c.thread).Load()
	if err != nil {
		return nil, err
	}
	switch name {
	case "data_path":
		if cfg.DataPathSource == "" {
			return nil, fmt.Errorf("ConfigurationError: Configuration not set and no default provided: data_path (set FUEL_DATA_PATH, data_path in ~/.fuelrc, or config.data_path)")
		}
		return starlib.StringList(cfg.DataPath), nil
	case "floatX":
		return starlark.String(starlib.FloatX(c.thread).String()), nil
	case "default_seed":
		return starlark.MakeInt(cfg.DefaultSeed), nil
	case "local_data_path":
		return starlark.String(cfg.LocalDataPath), nil
	case "extra_downloaders", "extra_converters":
		env := os.Getenv("FUEL_" + strings.ToUpper(name))
		return starlib.StringList(strings.Fields(env)), nil
	}
	return nil, nil
}

// SetField is Fuel's Configuration.__setattr__, with each declared
// setting's type checked when it is assigned rather than when it is read.
func (c fuelConfig) SetField(name string, v starlark.Value) error {
	if c.thread == nil {
		return fmt.Errorf("config.%s: the configuration can be set only from a running script", name)
	}
	set := fuelSettingsOf(c.thread, true)
	if s, ok := set.declared[name]; ok {
		s.value, s.set = v, true
		return nil
	}
	switch name {
	case "add_config":
		return fmt.Errorf("config.add_config cannot be assigned")
	case "data_path":
		var dirs []string
		if s, ok := starlark.AsString(v); ok {
			dirs = config.ParseDataPath(s)
		} else {
			l, ok := v.(starlark.Iterable)
			if !ok || v.Type() == "dict" {
				return fmt.Errorf("config.data_path: want a string of directories separated by ':' or a list of directories, got %s", v.Type())
			}
			it := l.Iterate()
			defer it.Done()
			var x starlark.Value
			for it.Next(&x) {
				s, ok := starlark.AsString(x)
				if !ok {
					return fmt.Errorf("config.data_path: want a list of directory names, got a %s in it", x.Type())
				}
				dirs = append(dirs, s)
			}
		}
		for _, d := range dirs {
			if d == "" {
				continue
			}
			if err := starlib.CheckRead(c.thread, os.ExpandEnv(d)); err != nil {
				return fmt.Errorf("config.data_path: %w", err)
			}
		}
		if dirs == nil {
			dirs = []string{}
		}
		set.s.DataPath = dirs
	case "floatX":
		s, ok := starlark.AsString(v)
		if !ok {
			return fmt.Errorf("config.floatX: want \"float32\" or \"float64\", got %s", v.Type())
		}
		dt, err := config.ParseFloatX(s)
		if err != nil {
			return fmt.Errorf("config.floatX: %v", err)
		}
		set.s.FloatX = &dt
		starlib.SetFloatX(c.thread, dt)
	case "default_seed":
		// Fuel applies int(): an int, or a string of one.
		var n int64
		if s, ok := starlark.AsString(v); ok {
			var err error
			if n, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
				return fmt.Errorf("config.default_seed: ValueError: invalid literal for int(): %q", s)
			}
		} else if err := starlark.AsInt(v, &n); err != nil {
			return fmt.Errorf("config.default_seed: want an int, got %s", v.Type())
		}
		if err := config.CheckSeed(n); err != nil {
			return fmt.Errorf("config.%v", err)
		}
		seed := int(n)
		set.s.DefaultSeed = &seed
	case "local_data_path":
		s, ok := starlark.AsString(v)
		if !ok {
			return fmt.Errorf("config.local_data_path: want a string, got %s", v.Type())
		}
		set.s.LocalDataPath = &s
	case "extra_downloaders", "extra_converters":
		var names []string
		if s, ok := starlark.AsString(v); ok {
			names = strings.Split(s, " ")
		} else {
			var err error
			if names, err = stringList("config."+name, v); err != nil {
				return err
			}
		}
		set.extra[name] = starlib.StringList(names)
	default:
		// Fuel's Configuration stores any other attribute as it is.
		set.extra[name] = v
	}
	return nil
}

// addConfig is config.add_config(key, type_, default=NOT_SET,
// env_var=None) on Fuel's own configuration: a setting of the script's,
// read as Configuration's (the assigned value, else env_var, else the
// default: Fuel reads ~/.fuelrc when fuel.config is imported, before any
// add_config, so the file gives these settings nothing). Fuel's own six
// settings cannot be declared again (Fuel would replace them, losing
// their parsing).
func (c fuelConfig) addConfig(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	key, s, err := parseAddConfig(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if slices.Contains(fuelConfigNames, key) {
		return nil, fmt.Errorf("%s: %s is Fuel's own setting, already declared", b.Name(), key)
	}
	if c.thread == nil {
		return nil, fmt.Errorf("%s: the configuration can be changed only from a running script", b.Name())
	}
	set := fuelSettingsOf(c.thread, true)
	set.declared[key] = s
	delete(set.extra, key)
	return starlark.None, nil
}
