package vit_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/vitgo/vit"

// floors orders the packages whose place is fixed (docs/architecture.md):
// a package may import only packages on its own floor or below. Packages
// not listed (the commands, classify, dist, the examples and experiments)
// stand above them all; internal/ is the ground floor.
var floors = map[string]int{
	"internal": 0, "graph": 1, "dist": 1,
	"layers": 2, "optim": 2, "data": 2,
	"memest":     3,
	"checkpoint": 4, "evaluate": 4, "report": 4,
	"train": 5,
}

// knowsNot lists imports that a floor allows but a package's job does not:
// a checkpoint knows no data set (its class check is internal/classnames',
// its memory check memest's), and serving does not need the trainer.
var knowsNot = map[string][]string{
	"checkpoint":               {"data"},
	"classify":                 {"train"},
	"examples/classify_server": {"train"},
}

// floorOf is the floor of the module package path (relative to the
// module root) by its first element; ok is false for one not listed.
func floorOf(rel string) (int, bool) {
	first, _, _ := strings.Cut(rel, "/")
	f, ok := floors[first]
	return f, ok
}

// TestImportsPointDown: no package imports one on a higher floor (above
// all: nothing under internal/ imports a package of the module outside
// internal/), checkpoint does not import data, classify and its server do
// not import train, and the module's imports have no cycle. Tests in a package
// count; external test packages (package x_test) stand apart.
func TestImportsPointDown(t *testing.T) {
	for _, e := range importErrors(moduleImports(t)) {
		t.Error(e)
	}
}

// TestImportCheckCatchesUpwardImportsAndCycles: the check reports an
// internal package importing the domain, a lower floor importing a higher
// one, and a cycle.
func TestImportCheckCatchesUpwardImportsAndCycles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  string
	}{
		{"internal imports data", map[string][]string{"internal/memory": {"data"}, "data": nil}, "internal/memory imports data"},
		{"data imports train", map[string][]string{"data": {"train"}, "train": nil}, "data imports train"},
		{"checkpoint imports data", map[string][]string{"checkpoint": {"data"}, "data": nil}, "checkpoint imports data"},
		{"a cycle", map[string][]string{"cmd/a": {"cmd/b"}, "cmd/b": {"cmd/c"}, "cmd/c": {"cmd/a"}}, "cycle"},
		{"clean", map[string][]string{"train": {"data", "internal/x"}, "data": {"internal/x"}, "internal/x": nil}, ""},
	} {
		errs := importErrors(tc.graph)
		got := strings.Join(errs, "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// importErrors checks a graph of module packages (paths relative to the
// module root) for upward imports and cycles.
func importErrors(g map[string][]string) []string {
	var errs []string
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		from, fromOK := floorOf(p)
		for _, q := range g[p] {
			to, toOK := floorOf(q)
			if strings.HasPrefix(p, "internal/") && !strings.HasPrefix(q, "internal/") {
				errs = append(errs, p+" imports "+q+": internal/ imports nothing outside internal/")
			} else if fromOK && (!toOK || to > from) {
				errs = append(errs, p+" imports "+q+", a package on a higher floor")
			} else if slices.Contains(knowsNot[p], q) {
				errs = append(errs, p+" imports "+q+", which its job does not need")
			}
		}
	}
	// Depth-first search for a cycle: a package met again while still on
	// the path.
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(p string) bool
	visit = func(p string) bool {
		switch state[p] {
		case onPath:
			i := slices.Index(path, p)
			errs = append(errs, "import cycle: "+strings.Join(append(path[i:], p), " -> "))
			return true
		case done:
			return false
		}
		state[p] = onPath
		path = append(path, p)
		for _, q := range g[p] {
			if visit(q) {
				return true
			}
		}
		path = path[:len(path)-1]
		state[p] = done
		return false
	}
	for _, p := range pkgs {
		if visit(p) {
			break
		}
	}
	return errs
}

// moduleImports parses the import clauses of every Go file of the module
// (all build tags) and returns each package's imports of module packages,
// paths relative to the module root.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	g := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			return nil // an external test package
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if _, ok := g[pkg]; !ok {
			g[pkg] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, module+"/")
			if ok && !slices.Contains(g[pkg], rel) {
				g[pkg] = append(g[pkg], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
