package vit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// jobsSourceFiles parses every non-test Go file of the module (testdata,
// vendor and dot-folders left out) and calls fn on each, with its
// slash-separated path.
func jobsSourceFiles(t *testing.T, fn func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	moduleGoFiles(t, false, parser.SkipObjectResolution, fn)
}

// moduleGoFiles parses the module's Go files (test files too when tests)
// in mode, testdata, vendor and dot-folders left out, and calls fn on each
// with its slash-separated path.
func moduleGoFiles(t *testing.T, tests bool, mode parser.Mode, fn func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(path), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHeadNamesListedOnce fails when a non-test file other than the
// parameter table (layers/params.go) spells a distillation head's parameter
// name: the head's parameters are the table's rows flagged head
// (layers.IsHead, layers.HeadPatterns), and a second list of them drifts
// when a head is added.
func TestHeadNamesListedOnce(t *testing.T) {
	jobsSourceFiles(t, func(path string, fset *token.FileSet, f *ast.File) {
		if path == "layers/params.go" {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "head_dist.") {
				t.Errorf("%s: %q lists a head's parameter again: use layers.IsHead or layers.HeadPatterns", fset.Position(lit.Pos()), s)
			}
			return true
		})
	})
}

// TestReportOnlyRenders fails when package report does more than render:
// it may take results, a model's table and estimates as values, but it
// loads no model file and runs no evaluation (evaluate.CheckpointReported
// and cmd/eval do, and hand report the files to write).
func TestReportOnlyRenders(t *testing.T) {
	forbidden := map[string]string{
		"github.com/vitgo/vit/checkpoint": "loads model files",
		"github.com/vitgo/vit/data":       "opens data sets",
		"github.com/vitgo/vit/graph":      "runs graphs",
		"github.com/vitgo/vit/train":      "is the trainer",
		"github.com/vitgo/vit/dist":       "talks to ranks",
	}
	evaluateRuns := []string{"Checkpoint", "CheckpointReported", "New", "NewIn", "NewMaps", "NewFrozenIn"}
	jobsSourceFiles(t, func(path string, fset *token.FileSet, f *ast.File) {
		if !strings.HasPrefix(path, "report/") {
			return
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if why, ok := forbidden[p]; ok {
				t.Errorf("%s imports %s, which %s: report only renders", fset.Position(imp.Pos()), p, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "evaluate" && slices.Contains(evaluateRuns, sel.Sel.Name) {
				t.Errorf("%s: evaluate.%s runs an evaluation: report only renders", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	})
}

// jobsModule is the module path of this repository.
const jobsModule = "github.com/vitgo/vit"

// jobsImports maps each package directory of the module to the module
// packages its files import; tests says whether test files count. Files
// built only by `go run` (//go:build ignore) do not.
func jobsImports(t *testing.T, tests bool) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	moduleGoFiles(t, tests, parser.ImportsOnly|parser.ParseComments, func(path string, _ *token.FileSet, f *ast.File) {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if c.Pos() < f.Package && strings.TrimSpace(c.Text) == "//go:build ignore" {
					return
				}
			}
		}
		dir := pathpkg.Dir(path)
		if out[dir] == nil {
			out[dir] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(p, jobsModule+"/"); ok {
				out[dir][rel] = true
			} else if p == jobsModule {
				out[dir]["."] = true
			}
		}
	})
	return out
}

// TestServingNeedsNoTrainer fails when serving (classify and everything
// under it, examples/classify_server) depends on the trainer (train), even
// only in its tests: through an import of its own or of any module package
// it reaches. The tiny model serving's tests classify is a committed file
// (internal/testmodel), not a training run.
func TestServingNeedsNoTrainer(t *testing.T) {
	withTests, plain := jobsImports(t, true), jobsImports(t, false)
	for dir := range withTests {
		if dir != "classify" && !strings.HasPrefix(dir, "classify/") && dir != "examples/classify_server" {
			continue
		}
		// Breadth first from dir's files (its tests included), then the
		// non-test files of each package reached; via[p] is how p was reached.
		via := map[string]string{}
		queue := []string{dir}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			imports := plain[p]
			if p == dir {
				imports = withTests[p]
			}
			for q := range imports {
				if _, seen := via[q]; seen || q == dir {
					continue
				}
				via[q] = p
				queue = append(queue, q)
			}
		}
		if _, ok := via["train"]; ok {
			chain := []string{"train"}
			for p := "train"; via[p] != dir; p = via[p] {
				chain = append([]string{via[p]}, chain...)
			}
			t.Errorf("%s depends on the trainer: %s imports %s", dir, dir, strings.Join(chain, " → "))
		}
	}
}

// maxFuncLines is the most lines a function's body may hold between its
// braces.
const maxFuncLines = 100

// longFuncExempt are the files whose functions may be longer, by path
// pattern: the assembly generators (//go:build ignore programs run by go
// generate), which write one kernel's instructions in order.
var longFuncExempt = []string{"graph/kernels/gen_*.go"}

// TestNoLongFunctions fails on a function (declared or literal) in a
// non-test Go file whose body holds more than maxFuncLines lines, outside
// longFuncExempt: a long function is several jobs, to be read as short
// ones that read top to bottom.
func TestNoLongFunctions(t *testing.T) {
	jobsSourceFiles(t, func(path string, fset *token.FileSet, f *ast.File) {
		for _, pat := range longFuncExempt {
			if ok, _ := filepath.Match(pat, path); ok {
				return
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "func literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, name = fn.Body, fn.Name.Name
				if fn.Recv != nil && len(fn.Recv.List) == 1 {
					name = jobsRecv(fn.Recv.List[0].Type) + "." + name
				}
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			if lines := fset.Position(body.Rbrace).Line - fset.Position(body.Lbrace).Line - 1; lines > maxFuncLines {
				t.Errorf("%s: %s is %d lines long (at most %d): split it", fset.Position(n.Pos()), name, lines, maxFuncLines)
			}
			return true
		})
	})
}

// jobsRecv names a method's receiver type, without its pointer or type
// parameters.
func jobsRecv(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return jobsRecv(x.X)
	case *ast.IndexExpr:
		return jobsRecv(x.X)
	case *ast.IndexListExpr:
		return jobsRecv(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
