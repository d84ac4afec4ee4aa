package config

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/blocks-go/blocks/nd"
)

// SourceAssigned is Config.DataPathSource for a data path a program set
// through Settings (a script's `config.data_path = ...`).
const SourceAssigned = "config.data_path"

// Settings are the values a program assigns to Fuel's configuration (in
// Fuel, `fuel.config.data_path = ...`): each one that is set wins over the
// environment and the file, as Fuel's Configuration.__setattr__ does. A
// nil *Settings sets nothing. A Settings belongs to one run: the package
// keeps none.
type Settings struct {
	// DataPath, when not nil, is the data path, one directory an entry
	// (empty entries are dropped; ~ and $VARS are expanded when a file is
	// looked up, as Fuel's find_in_data_path does).
	DataPath []string
	// FloatX, when not nil, is floatX.
	FloatX *nd.DType
	// DefaultSeed, when not nil, is default_seed.
	DefaultSeed *int
	// LocalDataPath, when not nil, is local_data_path.
	LocalDataPath *string
}

// Load is the configuration read from the file and the environment, with
// s's values over them.
func (s *Settings) Load() (*Config, error) {
	c, err := Load()
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c, nil
	}
	if s.DataPath != nil {
		c.DataPath = splitPaths(s.DataPath)
		c.DataPathSource = SourceAssigned
	}
	if s.FloatX != nil {
		c.FloatX = *s.FloatX
	}
	if s.DefaultSeed != nil {
		c.DefaultSeed = *s.DefaultSeed
	}
	if s.LocalDataPath != nil {
		c.LocalDataPath = *s.LocalDataPath
	}
	return c, nil
}

// FindFirst is FindFirst with s's data path when it sets one.
func (s *Settings) FindFirst(names ...string) (string, error) {
	c, err := s.Load()
	if err != nil {
		return "", err
	}
	return c.FindFirst(names...)
}

// ParseDataPath is Fuel's multiple_paths_parser: a string is split on
// os.PathListSeparator (':' here), a list is taken as it is.
func ParseDataPath(s string) []string {
	return strings.Split(s, string(os.PathListSeparator))
}

// ParseFloatX checks a floatX value: float32 or float64 (Fuel passes any
// string on to numpy, which then fails where floatX is used; here the
// assignment fails).
func ParseFloatX(s string) (nd.DType, error) { return parseFloatX(s) }

// CheckSeed checks a default_seed value: numpy's RandomState takes seeds
// in [0, 2**32).
func CheckSeed(seed int64) error {
	if seed < 0 || seed > math.MaxUint32 {
		return fmt.Errorf("default_seed must be between 0 and 2**32 - 1, got %d", seed)
	}
	return nil
}
