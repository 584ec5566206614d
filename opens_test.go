package vit_test

import (
	"go/ast"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// plainOpens are the functions that open a path with no check of its type:
// a FIFO named there blocks the open (or its read) until a writer or reader
// comes, and no signal ends that wait. Every open of a user-named or
// run-directory path goes through internal/regfile (Open, ReadFile,
// OpenFile, WriteFile, and ReadDir and WalkDir for directories) or
// internal/atomicfile instead.
var plainOpens = map[string][]string{
	"os":            {"Open", "OpenFile", "ReadFile", "Create", "WriteFile", "CreateTemp", "NewFile", "ReadDir", "DirFS"},
	"io/ioutil":     {"ReadFile", "WriteFile", "TempFile", "ReadDir"},
	"syscall":       {"Open", "Openat"},
	"path/filepath": {"Walk", "WalkDir"},
}

// allowedOpens are the plain opens that are justified, by file and
// function, each with its reason. An entry that no longer matches a call
// fails the test too, so the list stays exact.
var allowedOpens = map[string]string{
	"internal/regfile/regfile.go os.OpenFile":          "the type-checked open itself: Stat before, O_NONBLOCK, fstat after",
	"internal/regfile/dir.go os.OpenFile":              "the directory listing itself: Stat before, O_DIRECTORY|O_NONBLOCK",
	"internal/atomicfile/atomicfile.go os.CreateTemp":  "the temporary file of an atomic write: a new, randomly named file that the call creates (O_EXCL)",
	"internal/atomicfile/atomicfile.go os.Open":        "opens the directory of a file just renamed into it, to fsync the rename",
	"internal/gate/gate.go os.Open":                    "the test seam: opens its own FIFO on purpose, to hold a child process at a known point",
	"internal/gate/gate.go os.OpenFile":                "the test seam: opens its own FIFO on purpose, to hold a child process at a known point",
	"internal/gate/gate.go os.WriteFile":               "the test seam: creates its own marker file next to the gate",
	"internal/meminfo/meminfo.go os.ReadFile":          "reads the kernel's /proc/meminfo and the cgroup's memory files under /sys/fs/cgroup, not user paths",
	"experiments/internal/harness/machine.go os.Open":  "reads /proc/cpuinfo to describe the machine",
	"experiments/internal/harness/machine.go os.DirFS": "reads the kernel's CPU cache sizes under /sys/devices/system/cpu",
	"experiments/bench/table.go os.ReadFile":           "reads /proc/loadavg to record how busy the machine was",
	"graph/kernels/gen_gemm_asm.go os.WriteFile":       "go generate: writes the package's own assembly file by its fixed name",
	"graph/kernels/gen_panels_asm.go os.WriteFile":     "go generate: writes the package's own assembly file by its fixed name",
	"graph/kernels/gen_dp_asm.go os.WriteFile":         "go generate: writes the package's own assembly file by its fixed name",
}

// TestOpensGoThroughRegfile lists every call (or use as a value) of a
// plain open in the module's non-test Go files and fails on each one not in
// allowedOpens, so a new os.Open of a user path fails CI.
func TestOpensGoThroughRegfile(t *testing.T) {
	used := map[string]bool{}
	var found []string
	jobsSourceFiles(t, func(path string, fset *token.FileSet, f *ast.File) {
		local := map[string]string{} // the name a file gives each watched import → its path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if _, ok := plainOpens[p]; !ok {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || local[x.Name] == "" {
				return true
			}
			pkg := local[x.Name]
			for _, fn := range plainOpens[pkg] {
				if sel.Sel.Name != fn {
					continue
				}
				key := path + " " + pkg[strings.LastIndex(pkg, "/")+1:] + "." + fn
				if _, ok := allowedOpens[key]; ok {
					used[key] = true
					continue
				}
				found = append(found, fset.Position(sel.Pos()).String()+": "+pkg+"."+fn)
			}
			return true
		})
	})
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s opens a path without regfile: a FIFO there blocks it; use internal/regfile (or add a justified allowedOpens entry)", f)
	}
	for key := range allowedOpens {
		if !used[key] {
			t.Errorf("allowedOpens entry %q matches no call: remove it", key)
		}
	}
}
