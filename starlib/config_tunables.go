package starlib

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/core/device"
	"github.com/blocks-go/blocks/fuel/config"
)

// tunables are the names and resolved values config(...) declared.
type tunables struct {
	order      []string
	values     map[string]starlark.Value
	overridden map[string]bool
}

// Config is blocks.config's config: callable to declare the script's
// tunables, with Blocks' settings as attributes. Each run loads its own,
// bound to its thread: config.floatX and config.device are the run's
// (setting config.device changes where this run compiles, no other).
type Config struct {
	thread *starlark.Thread
	// ignored are Blocks' settings that have no meaning here
	// (recursion_limit, profile), as the script set them.
	ignored map[string]starlark.Value
}

// configIgnored are Blocks' settings a script may set with no effect here,
// with Blocks' defaults: recursion_limit is Python's (this project's
// graphs are not walked recursively in Python), profile Blocks' profiler
// (the main loop always keeps its timings: Timing).
func configIgnored() map[string]starlark.Value {
	return map[string]starlark.Value{"recursion_limit": starlark.MakeInt(10000), "profile": starlark.False}
}

var (
	_ starlark.Callable = (*Config)(nil)
	_ starlark.HasAttrs = (*Config)(nil)
)

func (*Config) String() string        { return "<blocks.config>" }
func (*Config) Type() string          { return "config" }
func (*Config) Freeze()               {}
func (*Config) Truth() starlark.Bool  { return true }
func (*Config) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: config") }
func (*Config) Name() string          { return "config" }

// AttrNames are Blocks' settings and get.
func (*Config) AttrNames() []string {
	return []string{"default_seed", "device", "floatX", "get", "log_backend", "profile", "recursion_limit"}
}

// Attr returns a setting.
func (c *Config) Attr(name string) (starlark.Value, error) {
	switch name {
	case "get":
		return NewBuiltin("get", configGet), nil
	case "default_seed":
		return starlark.MakeInt(config.DefaultSeed()), nil
	case "floatX":
		return starlark.String(FloatX(c.thread).String()), nil
	case "log_backend":
		return starlark.String("python"), nil
	case "device":
		return starlark.String(Device(c.thread).String()), nil
	}
	if v, ok := c.ignored[name]; ok {
		return v, nil
	}
	if v, ok := configIgnored()[name]; ok {
		return v, nil
	}
	return nil, nil
}

// SetField sets config.recursion_limit or config.profile (accepted and
// ignored: configIgnored), or config.device, for a script that pins where its run
// compiles from now on (config.device = "cpu"); a device this build cannot
// use is an error at that line. Other runs, and REPL sessions, keep their
// own device.
func (c *Config) SetField(name string, v starlark.Value) error {
	if def, ok := configIgnored()[name]; ok {
		if v.Type() != def.Type() {
			return fmt.Errorf("config.%s: want %s, got %s", name, article(def.Type()), v.Type())
		}
		if c.ignored == nil {
			c.ignored = map[string]starlark.Value{}
		}
		c.ignored[name] = v
		return nil
	}
	if name != "device" {
		return starlark.NoSuchAttrError(fmt.Sprintf("config.%s cannot be set (only config.device, and recursion_limit and profile, which are ignored; declare tunables with config(name=default))", name))
	}
	s, ok := starlark.AsString(v)
	if !ok {
		return fmt.Errorf("config.device: want a string such as \"cpu\" or \"cuda:0\", got %s", v.Type())
	}
	d, err := device.Parse(s)
	if err != nil {
		return err
	}
	return setDevice(c.thread, d)
}

// CallInternal is config(name=default, ...): the script's tunables.
func (c *Config) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("declare tunables by keyword, config(learning_rate=0.1, ...); got %d positional arguments", len(args))
	}
	s := state(thread)
	t := &tunables{values: map[string]starlark.Value{}, overridden: map[string]bool{}}
	for _, kv := range kwargs {
		name := string(kv[0].(starlark.String))
		var n Nesting
		if _, err := starlarkToGo(kv[1], &n); err != nil {
			return nil, fmt.Errorf("config(%s=...): %v", name, err)
		}
		t.order = append(t.order, name)
		t.values[name] = kv[1]
	}
	declared := append([]string(nil), t.order...)
	sort.Strings(declared)
	list := strings.Join(declared, ", ")
	if list == "" {
		list = "none"
	}
	if s != nil {
		s.mu.Lock()
		if s.tunables != nil {
			s.mu.Unlock()
			return nil, fmt.Errorf("the tunables are already declared (call config(...) once)")
		}
		for _, name := range t.order {
			v, ok := s.overrides[name]
			if !ok {
				continue
			}
			s.asked[name] = true
			fit, err := fitOverride(name, s.raw[name], v, t.values[name])
			if err != nil {
				s.mu.Unlock()
				return nil, fmt.Errorf("--set %s=%s: %s is declared as %s (%s), got %s; the tunables are: %s",
					name, s.raw[name], name, t.values[name], article(t.values[name].Type()), article(v.Type()), list)
			}
			t.values[name] = fit
			t.overridden[name] = true
		}
		s.tunables = t
		s.mu.Unlock()
	}
	members := starlark.StringDict{}
	for _, name := range t.order {
		members[name] = t.values[name]
	}
	return starlarkstruct.FromStringDict(starlark.String("config"), members), nil
}

// formatTunables prints one "name = value" line per tunable, in declared
// order, marking the overridden ones.
func formatTunables(t *tunables) string {
	var b strings.Builder
	for i, name := range t.order {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s = %s", name, t.values[name])
		if t.overridden[name] {
			b.WriteString("  # --set")
		}
	}
	if len(t.order) == 0 {
		b.WriteString("# config() declares no tunables")
	}
	return b.String()
}

// configRecord is the resolved config as a dict literal, for the log.
func configRecord(t *tunables) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range t.order {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %s", name, t.values[name])
	}
	b.WriteByte('}')
	return b.String()
}

// ConfigRecord is the resolved settings that a new main loop records in
// its log's row 0 (record "config"): the tunables config(...) declared,
// then the names config.get read so far, as a dict's text; false when the
// script has neither.
func ConfigRecord(thread *starlark.Thread) (string, bool) {
	s := state(thread)
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	t := s.tunables
	settings := append([]setting(nil), s.settings...)
	s.mu.Unlock()
	if t == nil && len(settings) == 0 {
		return "", false
	}
	record := "{}"
	declared := map[string]bool{}
	if t != nil {
		record = configRecord(t)
		for _, n := range t.order {
			declared[n] = true
		}
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(record, "}"))
	first := record == "{}"
	for _, x := range settings {
		if declared[x.name] {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%q: %s", x.name, x.value)
	}
	b.WriteByte('}')
	return b.String(), true
}

func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
