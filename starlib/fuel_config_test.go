package starlib_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlarkstruct"

	"github.com/blocks-go/blocks/starlib"
	"github.com/blocks-go/blocks/starlib/all"
)

// replSession runs chunks on one interpreter, as the REPL does, failing
// the test on an error.
type replSession struct {
	t  *testing.T
	in *starlib.Interp
}

func newREPLSession(t *testing.T, opts starlib.Options) *replSession {
	t.Helper()
	opts.Modules = map[string]*starlarkstruct.Module{"assert": assertModule}
	in, err := starlib.NewInterp(opts)
	if err != nil {
		t.Fatal(err)
	}
	in.Thread.SetLocal(reporterKey, t)
	return &replSession{t, in}
}

func (s *replSession) run(src string) {
	s.t.Helper()
	if _, err := s.in.ExecREPL(context.Background(), src); err != nil {
		s.t.Fatalf("%s: %v", src, err)
	}
}

func (s *replSession) fails(src, want string) {
	s.t.Helper()
	_, err := s.in.ExecREPL(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), want) {
		s.t.Errorf("%s: got %v, want an error containing %q", src, err, want)
	}
}

// upstream fuel: tests/test_config_parser.py::test_config_parser
//
// The upstream test, statement for statement: its own Configuration()
// with add_config, the YAML file named by FUEL_CONFIG, the environment
// over it (changed between REPL chunks, as upstream changes os.environ
// between reads), the type_ applied to every value (the string default
// '1' read as 1), an undeclared name an attribute error, an unset one
// with no default Fuel's ConfigurationError, an assignment over all, and
// an undeclared name assigned and read back.
func TestFuelConfigParserUpstream(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "fuelrc")
	if err := os.WriteFile(rc, []byte("data_path: yaml_path"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUEL_CONFIG", rc)
	t.Setenv("FUEL_DATA_PATH", "")
	os.Unsetenv("FUEL_DATA_PATH")
	t.Setenv("FUEL_CONFIG_TEST", "")
	os.Unsetenv("FUEL_CONFIG_TEST")
	s := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s.run(`load("assert", "assert")
load("fuel.config_parser", "Configuration")
config = Configuration()
config.add_config("data_path", str, env_var = "FUEL_DATA_PATH")
config.add_config("config_with_default", int, default = "1",
                  env_var = "FUEL_CONFIG_TEST")
config.add_config("config_without_default", str)
config.load_yaml()
assert.eq(config.data_path, "yaml_path")`)
	t.Setenv("FUEL_DATA_PATH", "env_path")
	s.run(`assert.eq(config.data_path, "env_path")
assert.eq(config.config_with_default, 1)`)
	t.Setenv("FUEL_CONFIG_TEST", "2")
	s.run(`assert.eq(config.config_with_default, 2)`)
	s.fails(`config.non_existing_config`, "has no .non_existing_config field")
	s.fails(`config.config_without_default`, "ConfigurationError: Configuration not set and no default provided: config_without_default.")
	s.run(`config.data_path = "manual_path"
assert.eq(config.data_path, "manual_path")
config.new_config = "new_config"
assert.eq(config.new_config, "new_config")`)
}

// Fuel's precedence on fuel.config's own configuration: the YAML file
// named by FUEL_CONFIG, then the environment over it, then an assignment
// over both; a missing name is an attribute error, an unset one with no
// default Fuel's ConfigurationError; an undeclared name can be assigned
// and read back.
func TestFuelConfigGlobalPrecedence(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "fuelrc")
	if err := os.WriteFile(rc, []byte("data_path: yaml_path\ndefault_seed: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUEL_CONFIG", rc)
	t.Setenv("FUEL_DATA_PATH", "")
	os.Unsetenv("FUEL_DATA_PATH")
	s := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s.run(`load("assert", "assert")
load("fuel.config", "config")
assert.eq(config.data_path, ["yaml_path"])
assert.eq(config.default_seed, 3)`)
	t.Setenv("FUEL_DATA_PATH", "env_path")
	s.run(`assert.eq(config.data_path, ["env_path"])`)
	s.fails(`config.non_existing_config`, "has no .non_existing_config field")
	s.run(`config.data_path = "manual_path"
assert.eq(config.data_path, ["manual_path"])
config.new_config = "new_config"
assert.eq(config.new_config, "new_config")
config.default_seed = "5"
assert.eq(config.default_seed, 5)`)

	// data_path set nowhere: Fuel's ConfigurationError.
	os.Unsetenv("FUEL_DATA_PATH")
	t.Setenv("FUEL_CONFIG", filepath.Join(dir, "none"))
	s = newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s.run(`load("fuel.config", "config")`)
	s.fails(`config.data_path`, "ConfigurationError: Configuration not set and no default provided: data_path")
}

// Assignments to fuel.config hold for the rest of their run or REPL
// session and for nothing else; the datasets, the schemes' and
// transformers' default generators, floatX's users and find_in_data_path
// follow them; bad values are refused when assigned.
func TestFuelConfigAssignment(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUEL_CONFIG", filepath.Join(dir, "no-fuelrc"))
	t.Setenv("FUEL_DATA_PATH", other)
	t.Setenv("FUEL_FLOATX", "float32")

	s := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s.run(`load("assert", "assert")
load("fuel.config", "config")
load("fuel.utils", "find_in_data_path")
load("fuel.converters.base", "fill_hdf5_file")
load("fuel.datasets", "Iris", "IndexableDataset")
load("fuel.streams", "DataStream")
load("fuel.schemes", "ShuffledScheme", "SequentialScheme")
load("fuel.transformers", "Cast")
load("fuel.transformers.image", "RandomFixedSizeCrop")
load("fuel.datasets.toy", "Spiral")
load("numpy", "arange", "zeros")
load("numpy.random", "RandomState")
load("tensor", "floatX")
assert.eq(config.data_path, [` + "\"" + other + "\"" + `])
assert.fails(lambda: find_in_data_path("a.txt"), "IOError")
config.data_path = "` + other + `:` + dir + `"
assert.eq(config.data_path, ["` + other + `", "` + dir + `"])
assert.eq(find_in_data_path("a.txt"), "` + filepath.Join(dir, "a.txt") + `")
config.data_path = ["` + dir + `"]
fill_hdf5_file("` + dir + `/iris.hdf5", [("all", "features", arange(8.0).reshape((4, 2))), ("all", "targets", zeros((4, 1), dtype = "uint8"))])
assert.eq(Iris(("all",)).num_examples, 4)`)

	// floatX.
	s.run(`assert.eq(config.floatX, "float32")
config.floatX = "float64"
assert.eq(config.floatX, "float64")
assert.eq(floatX, "float32")  # tensor.floatX keeps the value it had when loaded
stream = Cast(DataStream(IndexableDataset({"x": arange(3)}), iteration_scheme = SequentialScheme(3, 3)), "floatX")
assert.eq(str(next(stream.get_epoch_iterator())[0].dtype), "float64")`)
	s.fails(`config.floatX = "int32"`, "config.floatX: floatX must be float32 or float64")
	s.fails(`config.floatX = 64`, `config.floatX: want "float32" or "float64", got int`)

	// default_seed: the generators made without rng.
	s.run(`config.default_seed = 5
mine = ShuffledScheme(10, 10)
theirs = ShuffledScheme(10, 10, rng = RandomState(5))
assert.eq(next(mine.get_request_iterator()), next(theirs.get_request_iterator()))
images = DataStream(IndexableDataset({"f": arange(2 * 1 * 6 * 6).reshape((2, 1, 6, 6))}), iteration_scheme = SequentialScheme(2, 2))
a = next(RandomFixedSizeCrop(images, (3, 3), which_sources = ("f",)).get_epoch_iterator())[0]
b = next(RandomFixedSizeCrop(images, (3, 3), rng = RandomState(5), which_sources = ("f",)).get_epoch_iterator())[0]
assert.array_equal(a, b)
assert.array_equal(Spiral(num_examples = 5).get_data(None, slice(0, 5)), Spiral(num_examples = 5, seed = 5).get_data(None, slice(0, 5)))`)
	s.fails(`config.default_seed = -1`, "default_seed must be between 0 and 2**32 - 1, got -1")
	s.fails(`config.default_seed = "x"`, "invalid literal for int()")
	s.fails(`config.default_seed = 2.5`, "config.default_seed: want an int, got float")
	s.fails(`config.data_path = 3`, "config.data_path: want a string of directories")
	s.fails(`config.data_path = ["a", 3]`, "got a int in it")
	s.fails(`config.local_data_path = None`, "config.local_data_path: want a string")
	s.run(`config.local_data_path = "/tmp/local"
assert.eq(config.local_data_path, "/tmp/local")
config.extra_downloaders = "a.b c.d"
assert.eq(config.extra_downloaders, ["a.b", "c.d"])`)

	// A new session, and a script run, see none of it.
	s2 := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s2.run(`load("assert", "assert")
load("fuel.config", "config")
load("fuel.utils", "find_in_data_path")
assert.eq(config.data_path, ["` + other + `"])
assert.eq(config.floatX, "float32")
assert.eq(config.default_seed, 1)
assert.eq(config.local_data_path, "")
assert.true(not hasattr(config, "new_config"))
assert.fails(lambda: find_in_data_path("a.txt"), "IOError")`)
	s3 := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	if _, err := s3.in.ExecFile("run.star", []byte(`load("assert", "assert")
load("fuel.config", "config")
load("tensor", "floatX")
assert.eq(config.floatX, "float32")
assert.eq(floatX, "float32")
`)); err != nil {
		t.Fatal(err)
	}
}

// In a confined run (a stored checkpoint's script) the data path may name
// only directories the script may read.
func TestFuelConfigDataPathConfined(t *testing.T) {
	run := t.TempDir()
	t.Setenv("FUEL_CONFIG", filepath.Join(run, "no-fuelrc"))
	os.Unsetenv("FUEL_DATA_PATH")
	_, err := starlib.ExecFile(filepath.Join(run, "s.star"), []byte(`load("fuel.config", "config")
config.data_path = ["`+run+`/data"]
config.data_path = "/etc"
`), starlib.Options{Library: all.Library(), Stdout: discard{}, Sandbox: starlib.Sandbox{Confined: true, RunDir: run}})
	if err == nil || !strings.Contains(err.Error(), "config.data_path: reading /etc: outside the directories") {
		t.Errorf("got %v, want the sandbox's refusal of /etc", err)
	}
}

// Configuration and add_config beyond the upstream test, each reading
// checked against Fuel's own config_parser.py run by /usr/bin/python3
// (read from the Fuel mirror when this machine has it; PyYAML parses the
// file there): type_ functions (int, float, str, bool, the two parsers,
// a function of the script's), defaults of other types, YAML lists and
// numbers, precedence with and without env_var, a redeclaration
// forgetting the earlier value, and the config table. Errors: an
// undeclared YAML key, a type_ that fails, bad arguments.
func TestFuelConfigurationClass(t *testing.T) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "fuelrc")
	yaml := "a_list: [x, 'y z']\nnum: 7\nratio: 2.5\nflag: true\npaths: /p:/q\nmods: m.a m.b\nname: from_yaml\n"
	if err := os.WriteFile(rc, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FUEL_CONFIG", rc)
	t.Setenv("CFG_TEST_NUM", "11")
	t.Setenv("CFG_TEST_UNSET", "")
	os.Unsetenv("CFG_TEST_UNSET")
	// The same declarations and reads in both languages; each prints one
	// JSON line of the values read.
	const decls = `
config.add_config("a_list", list)
config.add_config("num", int, default = 3, env_var = "CFG_TEST_NUM")
config.add_config("ratio", float, env_var = "CFG_TEST_UNSET")
config.add_config("flag", bool, default = False)
config.add_config("paths", multiple_paths_parser)
config.add_config("mods", extra_downloader_converter, default = [])
config.add_config("name", str, default = "dflt")
config.add_config("twice", int, default = 4)
config.add_config("from_default", float, default = "0.5", env_var = "CFG_TEST_UNSET")
config.load_yaml()
first = [config.a_list, config.num, config.ratio, config.flag, config.paths, config.mods, config.name, config.twice, config.from_default]
config.num = "42"
config.name = 5
config.twice = 9
config.add_config("twice", int, default = 6)
config.extra = [1, 2]
second = [config.num, config.name, config.twice, config.extra, sorted(config.config["num"].keys()), sorted(config.config["twice"].keys())]
`
	var want [2]any
	fuelSrc, err := exec.Command("git", "--git-dir=/work/.mirror/mila-udem+fuel/repo/.git", "show", "HEAD:fuel/config_parser.py").Output()
	if err != nil || exec.Command("/usr/bin/python3", "-c", "import yaml, six").Run() != nil {
		t.Log("Fuel's config_parser.py (mirror) or PyYAML/six not here: checking against the values Fuel gives, written down")
		json.Unmarshal([]byte(`[["x","y z"],11,2.5,true,["/p","/q"],["m.a","m.b"],"from_yaml",4,0.5]`), &want[0])
		json.Unmarshal([]byte(`[42,"5",6,[1,2],["default","env_var","type","value","yaml"],["default","type"]]`), &want[1])
	} else {
		src := strings.Replace(string(fuelSrc), "from .exceptions import ConfigurationError", "class ConfigurationError(Exception): pass", 1)
		// Fuel's module loads its own configuration when imported: from
		// no file, so that the test's keys are not "unrecognized" there.
		py := "import os\n_rc = os.environ['FUEL_CONFIG']\nos.environ['FUEL_CONFIG'] = '/nonexistent/fuelrc'\n" + src +
			"\nos.environ['FUEL_CONFIG'] = _rc\nimport json\nconfig = Configuration()\n" +
			strings.NewReplacer(" = ", "=", "\n    ", "\n    ").Replace(strings.ReplaceAll(strings.ReplaceAll(decls, ", default = ", ", default="), ", env_var = ", ", env_var=")) +
			"print(json.dumps([first, second]))\n"
		out, err := exec.Command("/usr/bin/python3", "-c", py).Output()
		if err != nil {
			t.Fatalf("Fuel's config_parser: %v\n%s", err, py)
		}
		var got []any
		if err := json.Unmarshal(out, &got); err != nil || len(got) != 2 {
			t.Fatalf("python: %q %v", out, err)
		}
		want[0], want[1] = got[0], got[1]
	}
	// As in Fuel, the file is named after the session started (its own
	// configuration would refuse these keys).
	t.Setenv("FUEL_CONFIG", filepath.Join(dir, "none"))
	s := newREPLSession(t, starlib.Options{Library: all.Library(), Stdout: discard{}})
	s.run(`load("fuel.config_parser", "Configuration", "multiple_paths_parser", "extra_downloader_converter")
load("json", "encode")`)
	t.Setenv("FUEL_CONFIG", rc)
	s.run(`config = Configuration()` + decls)
	for i, name := range []string{"first", "second"} {
		v, err := s.in.ExecREPL(context.Background(), "encode("+name+")")
		if err != nil {
			t.Fatal(err)
		}
		var got any
		str, _ := strconv.Unquote(v.String())
		if err := json.Unmarshal([]byte(str), &got); err != nil {
			t.Fatalf("%s: %v %v", name, v, err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Errorf("%s: %s\nFuel: %s", name, g, w)
		}
	}

	// Errors.
	s.fails(`config.add_config("bad key", int)`, "not a valid attribute name")
	s.fails(`config.add_config("k", "int")`, "type_")
	s.fails(`config.add_config("k", int, env_var = 3)`, "env_var must be a string or None")
	s.run(`config.add_config("broken", int, default = "x")`)
	s.fails(`config.broken`, "Configuration.broken: int(")
	if err := os.WriteFile(rc, []byte("num: 1\nundeclared: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.fails(`config.load_yaml()`, "Unrecognized config in YAML: undeclared")
	s.fails(`config.add_config = 1`, "cannot be assigned")

	// fuel.config's own configuration takes add_config too.
	s.run(`load("fuel.config", fconfig = "config")
fconfig.add_config("my_setting", int, default = "8", env_var = "CFG_TEST_NUM")`)
	s.run(`load("assert", "assert")
assert.eq(fconfig.my_setting, 11)
fconfig.my_setting = "12"
assert.eq(fconfig.my_setting, 12)`)
	s.fails(`fconfig.add_config("data_path", str)`, "data_path is Fuel's own setting")
}
