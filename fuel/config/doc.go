// Package config reads Fuel's configuration: the data path where dataset
// files live, floatX and the default seed, with Fuel's precedence —
// environment variables override the configuration file, which overrides
// the defaults.
//
// The configuration file is YAML, read from $FUEL_CONFIG when that is set
// and from ~/.fuelrc otherwise; a missing file is not an error. Only the
// simple forms Fuel's documentation uses are understood: one `key: value`
// per line, with `#` comments, quoted or plain scalars, and lists written
// either as `[a, b]` or as indented `- item` lines. As in Fuel, a key Fuel
// does not know is an error.
//
//	setting          environment variable     default
//	data_path        FUEL_DATA_PATH           none (os.PathListSeparator list)
//	floatX           FUEL_FLOATX              float32 (Fuel has none; Theano's is float64)
//	default_seed     -                        1
//	local_data_path  FUEL_LOCAL_DATA_PATH     ""
//
// Nothing is cached: every call reads the environment and the file again,
// so a test or a REPL session that changes them sees the change.
package config
