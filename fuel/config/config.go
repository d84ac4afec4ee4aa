package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blocks-go/blocks/nd"
)

// Environment variables Fuel reads.
const (
	EnvConfig        = "FUEL_CONFIG"
	EnvDataPath      = "FUEL_DATA_PATH"
	EnvFloatX        = "FUEL_FLOATX"
	EnvLocalDataPath = "FUEL_LOCAL_DATA_PATH"
)

// DefaultFloatX is floatX when neither FUEL_FLOATX nor the file sets it.
const DefaultFloatX = nd.Float32

// Config is Fuel's configuration as read at one moment.
type Config struct {
	// DataPath is the list of directories datasets are looked up in, in
	// order, with ~ and $VARS expanded and empty entries dropped.
	DataPath []string
	// DataPathSource says where DataPath came from: "FUEL_DATA_PATH", the
	// file's path, or "" when nothing set it.
	DataPathSource string
	// FloatX is the float dtype Cast("floatX") and ForceFloatX produce.
	FloatX nd.DType
	// DefaultSeed seeds the default random generators (Fuel's
	// config.default_seed).
	DefaultSeed int
	// LocalDataPath is Fuel's local_data_path (a cache directory for slow
	// file systems; read, not used yet).
	LocalDataPath string
	// File is the configuration file that was read, or "" when none was.
	File string
}

// knownKeys are the settings Fuel declares; any other key in the file is
// an error, as in Fuel's Configuration.load_yaml.
var knownKeys = map[string]bool{
	"data_path":         true,
	"local_data_path":   true,
	"default_seed":      true,
	"extra_downloaders": true,
	"extra_converters":  true,
	"floatX":            true,
}

// Load reads the configuration file and the environment.
func Load() (*Config, error) {
	c := &Config{FloatX: DefaultFloatX, DefaultSeed: 1}
	file, err := configFile()
	if err != nil {
		return nil, err
	}
	var vals map[string]YAMLValue
	if file != "" {
		data, err := os.ReadFile(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Fuel reads the file only if it exists.
		case err != nil:
			return nil, fmt.Errorf("fuel/config: %w", err)
		default:
			vals, err = ParseYAML(string(data))
			if err != nil {
				return nil, fmt.Errorf("fuel/config: %s: %w", file, err)
			}
			c.File = file
		}
	}
	for k := range vals {
		if !knownKeys[k] {
			return nil, fmt.Errorf("fuel/config: %s: unrecognized config in YAML: %s", file, k)
		}
	}

	if env, ok := os.LookupEnv(EnvDataPath); ok {
		c.DataPath = splitPaths(strings.Split(env, string(os.PathListSeparator)))
		c.DataPathSource = EnvDataPath
	} else if v, ok := vals["data_path"]; ok {
		// Fuel splits a string on os.pathsep and takes a list as it is.
		items := v.List
		if !v.IsList {
			items = strings.Split(v.Scalar, string(os.PathListSeparator))
		}
		c.DataPath = splitPaths(items)
		c.DataPathSource = file
	}

	if env := os.Getenv(EnvFloatX); env != "" {
		c.FloatX, err = parseFloatX(env)
		if err != nil {
			return nil, fmt.Errorf("fuel/config: %s: %w", EnvFloatX, err)
		}
	} else if v, ok := vals["floatX"]; ok {
		c.FloatX, err = parseFloatX(v.Scalar)
		if err != nil {
			return nil, fmt.Errorf("fuel/config: %s: floatX: %w", file, err)
		}
	}

	if v, ok := vals["default_seed"]; ok {
		c.DefaultSeed, err = strconv.Atoi(v.Scalar)
		if err != nil {
			return nil, fmt.Errorf("fuel/config: %s: default_seed %q is not an integer", file, v.Scalar)
		}
	}

	if env, ok := os.LookupEnv(EnvLocalDataPath); ok {
		c.LocalDataPath = env
	} else if v, ok := vals["local_data_path"]; ok {
		c.LocalDataPath = v.Scalar
	}
	return c, nil
}

// configFile is $FUEL_CONFIG, or ~/.fuelrc ("" when there is no home).
func configFile() (string, error) {
	if f, ok := os.LookupEnv(EnvConfig); ok {
		return f, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", nil
	}
	return filepath.Join(home, ".fuelrc"), nil
}

func parseFloatX(s string) (nd.DType, error) {
	dt, err := nd.ParseDType(s)
	if err != nil {
		return 0, err
	}
	if !dt.IsFloat() {
		return 0, fmt.Errorf("floatX must be float32 or float64, not %s", dt)
	}
	return dt, nil
}

// splitPaths expands ~ and environment variables in each entry (as Fuel's
// find_in_data_path does) and drops empty entries.
func splitPaths(items []string) []string {
	var out []string
	for _, p := range items {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		p = os.ExpandEnv(p)
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[1:])
			}
		}
		out = append(out, p)
	}
	return out
}

// DataPath is the data path from FUEL_DATA_PATH or the configuration
// file's data_path, or nil when neither sets it or the file cannot be
// read (Load reports why).
func DataPath() []string {
	c, err := Load()
	if err != nil {
		return nil
	}
	return c.DataPath
}

// FloatX is floatX from FUEL_FLOATX or the configuration file, float32 by
// default, and also when the configuration is invalid (Load reports why).
func FloatX() nd.DType {
	c, err := Load()
	if err != nil {
		return DefaultFloatX
	}
	return c.FloatX
}

// DefaultSeed is Fuel's config.default_seed: the configuration file's
// default_seed, 1 by default.
func DefaultSeed() int {
	c, err := Load()
	if err != nil {
		return 1
	}
	return c.DefaultSeed
}

// NotFoundError says that no directory of the data path holds a file.
type NotFoundError struct {
	// Names are the file names looked for, relative to each directory.
	Names []string
	// Dirs are the directories looked in, in order.
	Dirs []string
	// Source is where the data path came from (see Config.DataPathSource).
	Source string
	// Hint says how to get the file.
	Hint string
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fuel/config: %s not found in Fuel's data path", strings.Join(e.Names, " or "))
	switch {
	case e.Source == "":
		fmt.Fprintf(&b, ": the data path is empty (%s is not set and no configuration file sets data_path)", EnvDataPath)
	case len(e.Dirs) == 0:
		fmt.Fprintf(&b, ": the data path set by %s is empty", e.Source)
	default:
		fmt.Fprintf(&b, " (set by %s); looked in: %s", e.Source, strings.Join(e.Dirs, ", "))
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// FindFile returns the path of the first file called name in the data
// path's directories, as Fuel's find_in_data_path does. name may hold a
// subdirectory ("mnist/train-images-idx3-ubyte.gz").
func FindFile(name string) (string, error) {
	return FindFirst(name)
}

// FindFirst returns the first existing regular file among names, trying
// every name in a directory of the data path before the next directory.
// The error is a *NotFoundError listing the directories looked in and how
// to get the file, or an error reading the configuration.
func FindFirst(names ...string) (string, error) {
	c, err := Load()
	if err != nil {
		return "", err
	}
	return c.FindFirst(names...)
}

// FindFirst returns the first existing regular file among names in c's
// data path (see the function FindFirst).
func (c *Config) FindFirst(names ...string) (string, error) {
	for _, dir := range c.DataPath {
		for _, n := range names {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", &NotFoundError{
		Names:  names,
		Dirs:   c.DataPath,
		Source: c.DataPathSource,
		Hint:   hintFor(names),
	}
}

// hintFor says how to get a file of a dataset this project downloads.
func hintFor(names []string) string {
	for _, n := range names {
		base := filepath.Base(n)
		if base == "mnist.hdf5" || strings.Contains(base, "-idx") {
			return fmt.Sprintf("get MNIST with `blocks-repl fuel download mnist` into a directory, and put that directory on the data path (%s=/that/dir, or data_path in ~/.fuelrc)", EnvDataPath)
		}
	}
	return fmt.Sprintf("download the dataset into a directory (`blocks-repl fuel download <dataset>`), and put that directory on the data path (%s=/that/dir, or data_path in ~/.fuelrc)", EnvDataPath)
}
