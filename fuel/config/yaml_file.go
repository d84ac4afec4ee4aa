package config

import (
	"strconv"
	"strings"
)

// YAMLValue is a top-level value of a configuration file, as the reader
// of .fuelrc files gives it: a scalar or a list of scalars (as written,
// quotes removed).
type YAMLValue struct {
	Scalar string
	List   []string
	IsList bool
}

// ConfigFile is the file Fuel's Configuration.load_yaml reads:
// $FUEL_CONFIG when set, else ~/.fuelrc ("" when there is no home
// directory).
func ConfigFile() string {
	f, _ := configFile()
	return f
}

// ParseYAML reads the text of a configuration file (the subset of YAML a
// .fuelrc uses: top-level `key: value` lines, comments, quoted scalars,
// flow and block lists of scalars); anything else is an error naming the
// line.
func ParseYAML(text string) (map[string]YAMLValue, error) {
	vals, err := parseYAML(text)
	if err != nil {
		return nil, err
	}
	out := make(map[string]YAMLValue, len(vals))
	for k, v := range vals {
		out[k] = YAMLValue{Scalar: v.scalar, List: v.list, IsList: v.isList}
	}
	return out, nil
}

// ScalarKind is how yaml.safe_load types a plain scalar: "int", "float",
// "bool" (true/false, yes/no, on/off in any case, as YAML 1.1), "null"
// (null, ~ or empty) or "str".
func ScalarKind(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off":
		return "bool"
	case "null", "~", "":
		return "null"
	}
	if _, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
		return "int"
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, ".eE") {
		return "float"
	}
	return "str"
}
