package vit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// jobsSourceFiles parses every non-test Go file of the module (testdata,
// vendor and dot-folders left out) and calls fn on each, with its
// slash-separated path.
func jobsSourceFiles(t *testing.T, fn func(path string, fset *token.FileSet, f *ast.File)) {
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
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
