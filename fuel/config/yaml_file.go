package config

import (
	"strconv"
	"strings"
)

// ConfigFile is the file Fuel's Configuration.load_yaml reads:
// $FUEL_CONFIG when set, else ~/.fuelrc ("" when there is no home
// directory).
func ConfigFile() string {
	f, _ := configFile()
	return f
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
