package layout_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// mutableState lists the package-level variables that hold state on
// purpose (README, "Package-level state"), each with its reason. Every
// other package-level variable of the module must be of a kind that is
// immutable by construction or convention (see varKind) and never be
// assigned after its declaration.
var mutableState = map[string]string{
	// Process-wide resources.
	"train/checkpoint.locks":          "the flock table: a lock is held by the process, so its table is the process's",
	"train/parallel.world":            "the MPI world: MPI_Init runs once per process",
	"train/parallel.worldErr":         "the MPI world: MPI_Init runs once per process",
	"train/parallel.worldOnce":        "the MPI world: MPI_Init runs once per process",
	"fuel/h5.hdf5Mu":                  "libhdf5 is not thread-safe: one mutex per process",
	"nd.budget":                       "the memory budget every allocation is checked against (--max-memory): one run per process, and nd.New has no context to carry a run's own",
	"core/exec/cpu/kernels.settings":  "the CPU kernel settings: OpenBLAS threading is process-wide by nature",
	"core/exec/cpu/kernels.par":       "the CPU worker pool, shared by every function of the process",
	"core/exec/cpu/kernels.gemmSplit": "whether the linked OpenBLAS lets the worker pool split products, probed once at start",

	// The running split's job, guarded by the worker pool's split lock, so
	// that a split allocates nothing.
	"core/exec/cpu/kernels.gemmJob32": "the running split product's job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.gemmJob64": "the running split product's job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.rowJob32":  "the running split row kernel's job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.rowJob64":  "the running split row kernel's job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.binJob32":  "the running split elementwise job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.binJob64":  "the running split elementwise job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.unJob32":   "the running split elementwise job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.unJob64":   "the running split elementwise job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.colSum32":  "the running split column sum's job, guarded by the worker pool's split lock",
	"core/exec/cpu/kernels.colSum64":  "the running split column sum's job, guarded by the worker pool's split lock",
	"core/exec/cpu.rnnRows32":         "the running split recurrent step's job, guarded by the worker pool's split lock",
	"core/exec/cpu.rnnRows64":         "the running split recurrent step's job, guarded by the worker pool's split lock",

	// Registries filled at start.
	"core.backends":                "the backends linked into the program (RegisterBackend from a backend package's init)",
	"cmd/blocks-repl.commands":     "the command table, filled by each command file's init",
	"cmd/blocks-repl.fuelCommands": "the fuel subcommand table, filled by each subcommand file's init",

	// Caches and counters.
	"starlib/blocks.classTables": "the brick and extension class tables, filled once when the package's modules are built (its documented cache)",
	"core.lastID":                "the variable ID counter (an atomic)",
	"bricks.callIDs":             "the application call ID counter (an atomic)",

	// CPU-feature flags and test hooks.
	"internal/vec.useAVX2":             "a CPU-feature flag, read once (tests turn it off to check the portable loop)",
	"internal/vec.useFMA":              "a CPU-feature flag, read once (tests turn it off to check the portable loop)",
	"core/exec/cpu.rnnMinSplitWork":    "a test hook: tests split small layers",
	"core/exec/cpu.rnnMaxSplitWeights": "a test hook: tests split small layers",

	// Set once from another package's init: a Starlark attribute lookup has
	// no thread that could carry it.
	"starlib.tagExt": "Blocks' tag attributes (starlib/blocks, set once at init): a Starlark attribute lookup has no thread to carry them",
}

// pkgVar is a package-level variable of a non-test file.
type pkgVar struct {
	pos   token.Position
	typ   ast.Expr
	value ast.Expr // nil without an initializer
	embed bool     // a //go:embed variable
	spec  *ast.ValueSpec
}

// moduleFile is a parsed Go file of the module.
type moduleFile struct {
	dir  string // the package's directory, relative to the module root
	test bool
	f    *ast.File
}

// parseModule parses every Go file of the module (test files included),
// except testdata, hidden directories and `//go:build ignore` programs.
func parseModule(t *testing.T, fset *token.FileSet, root string) []moduleFile {
	t.Helper()
	var files []moduleFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, c := range f.Comments {
			if c.Pos() < f.Package && strings.Contains(c.Text(), "+build ignore") || hasDirective(c, "//go:build ignore") {
				return nil
			}
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		if rel == "." {
			rel = ""
		}
		files = append(files, moduleFile{dir: filepath.ToSlash(rel), test: strings.HasSuffix(name, "_test.go"), f: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func hasDirective(c *ast.CommentGroup, d string) bool {
	for _, l := range c.List {
		if l.Text == d {
			return true
		}
	}
	return false
}

// TestPackageState checks that the module keeps no hidden global state
// (README, "Package-level state"): every package-level variable of a
// non-test file is either allowlisted in mutableState with its reason, or
// of a kind immutable by construction or convention (varKind) and never
// assigned, incremented, index-assigned, field-assigned or deleted from
// outside its declaration, by any code of the module, tests included (a
// variable that tests change is a test hook, and is listed as one).
func TestPackageState(t *testing.T) {
	fset := token.NewFileSet()
	files := parseModule(t, fset, "../..")
	vars := map[string]*pkgVar{} // "dir.name"
	pkgName := map[string]string{}
	specs := map[*ast.ValueSpec]bool{}
	for _, mf := range files {
		if mf.test {
			continue
		}
		pkgName[mf.dir] = mf.f.Name.Name
		for _, d := range mf.f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				specs[vs] = true
				embed := g.Doc != nil && hasDirectivePrefix(g.Doc, "//go:embed ") || vs.Doc != nil && hasDirectivePrefix(vs.Doc, "//go:embed ")
				for i, n := range vs.Names {
					if n.Name == "_" {
						continue // a compile-time interface check
					}
					v := &pkgVar{pos: fset.Position(n.Pos()), typ: vs.Type, embed: embed, spec: vs}
					if i < len(vs.Values) {
						v.value = vs.Values[i]
					} else if len(vs.Values) == 1 && len(vs.Names) > 1 {
						v.value = vs.Values[0] // a multi-value call
					}
					vars[qualify(mf.dir, n.Name)] = v
				}
			}
		}
	}
	if len(vars) < 100 {
		t.Fatalf("found %d package-level variables: is the module root ../..?", len(vars))
	}

	// Every write to a package-level variable, by the module's code.
	writes := map[string][]string{}
	for _, mf := range files {
		imports := map[string]string{} // local name -> dir of a module package
		for _, im := range mf.f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			dir := strings.TrimPrefix(p, module)
			name := pkgName[dir]
			if im.Name != nil {
				name = im.Name.Name
			}
			if name == "" {
				name = path.Base(dir)
			}
			imports[name] = dir
		}
		internal := !strings.HasSuffix(mf.f.Name.Name, "_test")
		// target is the package-level variable a written expression
		// belongs to ("" for a local one).
		target := func(e ast.Expr) string {
			for {
				switch x := e.(type) {
				case *ast.ParenExpr:
					e = x.X
				case *ast.StarExpr:
					e = x.X
				case *ast.IndexExpr:
					e = x.X
				case *ast.IndexListExpr:
					e = x.X
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Obj == nil {
						if dir, ok := imports[id.Name]; ok {
							return qualify(dir, x.Sel.Name)
						}
					}
					e = x.X
				case *ast.Ident:
					if !internal || x.Name == "_" {
						return ""
					}
					if x.Obj != nil {
						vs, ok := x.Obj.Decl.(*ast.ValueSpec)
						if !ok || !specs[vs] {
							return "" // a local, a parameter, a receiver
						}
					}
					return qualify(mf.dir, x.Name)
				default:
					return ""
				}
			}
		}
		note := func(e ast.Expr, how string) {
			if k := target(e); k != "" && vars[k] != nil {
				writes[k] = append(writes[k], fmt.Sprintf("%s at %s", how, fset.Position(e.Pos())))
			}
		}
		for _, d := range mf.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					if n.Tok != token.DEFINE {
						for _, l := range n.Lhs {
							note(l, "assigned")
						}
					}
				case *ast.IncDecStmt:
					note(n.X, "incremented")
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "delete" || id.Name == "clear") && id.Obj == nil && len(n.Args) > 0 {
						note(n.Args[0], id.Name+"d")
					}
				case *ast.UnaryExpr:
					if n.Op == token.AND {
						if _, lit := n.X.(*ast.CompositeLit); !lit {
							note(n.X, "its address taken")
						}
					}
				}
				return true
			})
		}
	}

	var names []string
	for k := range vars {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := vars[k]
		if reason, ok := mutableState[k]; ok {
			if strings.TrimSpace(reason) == "" {
				t.Errorf("%s: allowlisted without a reason", k)
			}
			if _, ok := varKind(v); ok && len(writes[k]) == 0 {
				t.Errorf("%s (%s) is never written and of a known immutable kind: drop its mutableState entry", k, v.pos)
			}
			continue
		}
		if w := writes[k]; len(w) > 0 {
			t.Errorf("%s (%s) is package-level mutable state: %s; pass it explicitly, or allowlist it in mutableState with the reason", k, v.pos, strings.Join(w, "; "))
			continue
		}
		if kind, ok := varKind(v); !ok {
			t.Errorf("%s (%s) is package-level state of an unknown kind (%s); pass it explicitly, or allowlist it in mutableState with the reason", k, v.pos, kind)
		}
	}
	for k := range mutableState {
		if vars[k] == nil {
			t.Errorf("mutableState lists %s, which is not a package-level variable of the module (any more): drop the entry", k)
		}
	}

	// The README tells the same story: it names every allowlisted variable.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for k := range mutableState {
		if !strings.Contains(string(readme), "`"+k+"`") {
			t.Errorf("README.md (Package-level state) does not name `%s`, which TestPackageState allows", k)
		}
	}
	// ... and no other: every variable of the module it names is allowed.
	_, section, ok := strings.Cut(string(readme), "**Package-level state.**")
	if !ok {
		t.Fatal("README.md has no paragraph **Package-level state.**")
	}
	section, _, _ = strings.Cut(section, "\n\n**")
	for _, m := range regexp.MustCompile("`([a-z0-9_/-]+)\\.([A-Za-z_][A-Za-z0-9_]*)`").FindAllStringSubmatch(section, -1) {
		if _, own := pkgName[m[1]]; own && mutableState[m[1]+"."+m[2]] == "" {
			t.Errorf("README.md (Package-level state) names `%s.%s`, which TestPackageState does not allow", m[1], m[2])
		}
	}
}

func qualify(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "." + name
}

func hasDirectivePrefix(c *ast.CommentGroup, d string) bool {
	for _, l := range c.List {
		if strings.HasPrefix(l.Text, d) {
			return true
		}
	}
	return false
}

// immutableCalls are the calls whose result is a value that is immutable
// by construction or convention.
var immutableCalls = map[string]string{
	"errors.New":         "an error",
	"fmt.Errorf":         "an error",
	"regexp.MustCompile": "a compiled regexp",
	"newRole":            "a role sentinel",
	"sync.OnceValue":     "a value computed once, on first use (a cache)",
	"time.Date":          "a time value",
	"strings.Repeat":     "a string",
}

// varKind says what kind of immutable value v holds, and false when it is
// none the rule recognizes:
//   - an embedded file (//go:embed);
//   - the result of one of immutableCalls (errors, compiled regexps, role
//     sentinels, sync.OnceValue caches);
//   - a sync.Pool (a pool of scratch values, which hold no state);
//   - a read-only table or value: a composite literal (or its address), a
//     literal, a constant expression, a conversion of one, another
//     package's variable or constant (a CPU-feature flag), or a function
//     literal called once to build the value.
//
// The caller checks that the variable is never assigned.
func varKind(v *pkgVar) (string, bool) {
	if v.embed {
		return "an embedded file", true
	}
	if v.value == nil {
		return "declared without a value, to be written later", false
	}
	return exprKind(v.value)
}

func exprKind(e ast.Expr) (string, bool) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return exprKind(x.X)
	case *ast.CompositeLit:
		return "a read-only table", true
	case *ast.BasicLit:
		return "a read-only value", true
	case *ast.Ident, *ast.SelectorExpr:
		return "a read-only value", true
	case *ast.UnaryExpr:
		return exprKind(x.X)
	case *ast.BinaryExpr:
		if k, ok := exprKind(x.X); !ok {
			return k, ok
		}
		return exprKind(x.Y)
	case *ast.CallExpr:
		switch f := x.Fun.(type) {
		case *ast.FuncLit:
			return "a read-only value built once", true
		case *ast.ParenExpr, *ast.ArrayType, *ast.MapType:
			if len(x.Args) == 1 { // a conversion
				return exprKind(x.Args[0])
			}
		case *ast.Ident:
			if k, ok := immutableCalls[f.Name]; ok {
				return k, true
			}
			return "the result of " + f.Name, false
		case *ast.SelectorExpr:
			if id, ok := f.X.(*ast.Ident); ok {
				if k, ok := immutableCalls[id.Name+"."+f.Sel.Name]; ok {
					return k, true
				}
				return "the result of " + id.Name + "." + f.Sel.Name, false
			}
		}
		return "the result of a call", false
	}
	return fmt.Sprintf("a %T", e), false
}
