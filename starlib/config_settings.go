package starlib

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"
)

// A script's settings are known before anything trains, whichever way it
// reads them (config(...) or config.get): the settings checkpoint comes at
// the first main_loop.run(), the first compiled function (function(...),
// eval) or the end of the script, whichever is first. There an override
// the script has neither declared nor read is an error, and
// --print-config prints the settings and stops the script
// (ErrConfigPrinted). A script should therefore read every setting before
// its first main loop or compiled function (docs/checkpoints.md).

// setting is one config.get read.
type setting struct {
	name       string
	value      starlark.Value
	overridden bool
}

// recordSetting records a config.get read (the first of each name).
func (s *runState) recordSetting(name string, v starlark.Value, overridden bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.settings {
		if x.name == name {
			return
		}
	}
	s.settings = append(s.settings, setting{name, v, overridden})
}

// ErrConfigPrinted stops a --print-config run (Options.PrintConfig) once
// its settings are known.
var ErrConfigPrinted = errors.New("config printed")

// CheckSettings is the settings checkpoint a module's main loop passes
// before it trains: the overrides the script never read are an error, and
// a --print-config run prints the settings and stops (ErrConfigPrinted).
// It checks once per run.
func CheckSettings(thread *starlark.Thread) error { return settingsCheckpoint(thread) }

// PrintingConfig reports whether thread's run only prints its settings
// (Options.PrintConfig): it writes nothing.
func PrintingConfig(thread *starlark.Thread) bool {
	s := state(thread)
	return s != nil && s.printConfig != nil
}

// settingsCheckpoint checks the overrides and serves --print-config, once
// per run.
func settingsCheckpoint(thread *starlark.Thread) error {
	s := state(thread)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	if s.settingsChecked {
		s.mu.Unlock()
		return nil
	}
	s.settingsChecked = true
	err := s.unknownOverrides()
	text := s.formatSettings()
	pc := s.printConfig
	out := s.stdout
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if pc != nil {
		if text != "" {
			fmt.Fprintln(out, text)
			pc.Printed = true
		}
		return ErrConfigPrinted
	}
	return nil
}

// formatSettings is one "name = value" line per setting: the tunables
// config(...) declared, in order, then the other names config.get read,
// marking the overridden ones; "" when there are none. Called with s.mu
// held.
func (s *runState) formatSettings() string {
	var lines []string
	declared := map[string]bool{}
	if s.tunables != nil {
		for _, l := range strings.Split(formatTunables(s.tunables), "\n") {
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		for _, n := range s.tunables.order {
			declared[n] = true
		}
	}
	for _, x := range s.settings {
		if declared[x.name] {
			continue
		}
		l := fmt.Sprintf("%s = %s", x.name, x.value)
		if x.overridden {
			l += "  # --set"
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// unknownTunables reports the overrides a script that declared tunables
// with config(...) neither declared nor read with config.get. Called with
// s.mu held.
func (s *runState) unknownTunables() error {
	var unknown []string
	for name := range s.overrides {
		if _, ok := s.tunables.values[name]; !ok && !s.asked[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	known := append([]string(nil), s.tunables.order...)
	for n := range s.asked {
		if _, ok := s.tunables.values[n]; !ok {
			known = append(known, n)
		}
	}
	sort.Strings(known)
	msg := fmt.Sprintf("--set %s: not a tunable of this script; its tunables are: %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	for _, u := range unknown {
		if c := closest(u, known); c != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", c)
		}
	}
	return fmt.Errorf("%s", msg)
}
