package vit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docFiles are the documents whose code references TestDocsNameWhatExists
// checks.
func docFiles(t *testing.T) []string {
	files := []string{"README.md", "CONTRIBUTING.md"}
	more, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	for _, pat := range []string{"experiments/*.md", "experiments/*/*.md", "experiments/*/*.tmpl", "examples/*/*.md", "deploy/*.md", "deploy/*/*.md"} {
		more, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range more {
			// experiments/bench's records narrate its profiles and kernels
			// by the names they had when measured.
			if !strings.HasPrefix(f, "experiments/bench/") {
				files = append(files, f)
			}
		}
	}
	return files
}

// TestDocsNameWhatExists: every Go identifier a document names in
// backticks as pkg.Name (pkg one of this module's packages) is declared in
// that package, with its method or field where it names one
// (pkg.Type.Method, pkg.(*Type).Method); and every repository path it names
// (dir/file.go, ./pkg, configs/x.yaml, in backticks or in a fenced block)
// exists.
func TestDocsNameWhatExists(t *testing.T) {
	idx := indexPackages(t, ".")
	for _, doc := range docFiles(t) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range codeRefs(string(text)) {
			if msg := idx.checkIdent(ref.text); msg != "" {
				t.Errorf("%s:%d: `%s`: %s", doc, ref.line, ref.text, msg)
			}
			for _, p := range repoPaths(ref.text) {
				if _, err := os.Stat(p); err != nil && !runtimePaths[p] {
					t.Errorf("%s:%d: `%s`: no %s in the repository", doc, ref.line, ref.text, p)
				}
			}
		}
	}
}

// TestDocsCheckerCatchesWrongNames: the checker refuses a name or a path
// that is not there, and accepts each form it resolves.
func TestDocsCheckerCatchesWrongNames(t *testing.T) {
	idx := indexPackages(t, ".")
	for _, ok := range []string{"train.Run", "*train.NonFiniteError", "train.Config{}.WithDefaults()",
		"layers.(*VisionTransformer).Build", "layers.BuildOptions.Frozen", "train.TestGoldenSteps",
		"safetensors.Write(path, tensors, metadata)", "errors.As", "optim.lr"} {
		if msg := idx.checkIdent(ok); msg != "" {
			t.Errorf("`%s`: %s, want accepted", ok, msg)
		}
	}
	for _, bad := range []string{"train.NoSuchThing", "train.Config.NoSuchField", "layers.(*VisionTransformer).Fly"} {
		if idx.checkIdent(bad) == "" {
			t.Errorf("`%s` accepted, want refused", bad)
		}
	}
	if got := repoPaths("go test ./train/nosuch -run X"); len(got) != 1 || got[0] != "train/nosuch" {
		t.Errorf("repoPaths = %q, want [train/nosuch]", got)
	}
	if got := repoPaths("runs/default/best.safetensors ../x/y.py image/jpeg ./..."); len(got) != 0 {
		t.Errorf("repoPaths = %q, want none (not repository paths)", got)
	}
}

// codeRef is the text of one inline code span, or one line of a fenced
// block, and the line it starts on.
type codeRef struct {
	text string
	line int
}

var inlineCode = regexp.MustCompile("`([^`\n]+)`")

// codeRefs returns the inline code spans and the fenced blocks' lines of a
// Markdown text.
func codeRefs(md string) []codeRef {
	var refs []codeRef
	fenced := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			refs = append(refs, codeRef{line, i + 1})
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			refs = append(refs, codeRef{m[1], i + 1})
		}
	}
	return refs
}

// goRef matches a qualified Go name: pkg.Name, pkg.Name.Member,
// pkg.(*Name).Member, optionally after a * and before (…) or {…}.
var goRef = regexp.MustCompile(`^\*?([a-z][a-z0-9]*)\.(?:\(\*([A-Z]\w*)\)|([A-Z]\w*))(?:\{[^}]*\})?(?:\.([A-Za-z]\w*))?(?:\(.*\))?$`)

// bareRef matches an unqualified Go name, Name or Type.Member, in
// camelCase or PascalCase (a config key is snake_case, a constant of one
// letter is maths), optionally before (…).
var bareRef = regexp.MustCompile(`^\*?([A-Za-z][a-z0-9]*[A-Z]\w*|[A-Z][a-z0-9]+\w*)(?:\.([A-Za-z]\w*))?(?:\(.*\))?$`)

// checkBare returns why an unqualified name is declared in none of the
// module's packages (as a top-level name, or Type with member Member), or
// "" when some package declares it.
func (idx pkgIndex) checkBare(name, member string) string {
	if strings.Contains(name, "_") || strings.ToUpper(name) == name || foreignNames[name] {
		return ""
	}
	for _, p := range idx {
		if member == "" && (p.names[name] || p.isMember(name)) {
			return ""
		}
		if member != "" && p.names[name] && p.members[name][member] {
			return ""
		}
	}
	if member != "" {
		return "no package declares " + name + " with a method or field " + member
	}
	return "no package declares " + name
}

func (p *decls) isMember(name string) bool {
	for _, ms := range p.members {
		if ms[name] {
			return true
		}
	}
	return false
}

// foreignNames are unqualified names the documents take from other
// projects: Gorgonia's API, Python's, Kubeflow's and Slurm's.
var foreignNames = map[string]bool{
	"TapeMachine": true, "Reset": true, "RunAll": true, "SoftMax": true, "LogSoftMax": true,
	"InverseSqrt": true, "BindDualValues": true, "False": true, "MPIJob": true, "KillWait": true,
	"HxW": true, "VisionTransformerDistilled": true, "DistillationLoss": true, "ReadWriteMany": true, "ReadWriteOnce": true,
}

// pkgIndex is what each of the module's packages declares, by package name
// (the last element of its import path).
type pkgIndex map[string]*decls

type decls struct {
	names   map[string]bool            // top-level funcs, types, vars, consts
	members map[string]map[string]bool // a type's methods and struct fields
}

// indexPackages parses every Go file under root (test files included,
// testdata excluded) for its top-level declarations.
func indexPackages(t *testing.T, root string) pkgIndex {
	t.Helper()
	idx := pkgIndex{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(f.Name.Name, "_test")
		if name == "main" {
			name = filepath.Base(filepath.Dir(path))
		}
		p := idx[name]
		if p == nil {
			p = &decls{names: map[string]bool{}, members: map[string]map[string]bool{}}
			idx[name] = p
		}
		p.add(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func (p *decls) member(typ, name string) {
	if p.members[typ] == nil {
		p.members[typ] = map[string]bool{}
	}
	p.members[typ][name] = true
}

func (p *decls) add(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				p.names[d.Name.Name] = true
				continue
			}
			typ := d.Recv.List[0].Type
			for {
				switch x := typ.(type) {
				case *ast.StarExpr:
					typ = x.X
					continue
				case *ast.IndexExpr:
					typ = x.X
					continue
				case *ast.IndexListExpr:
					typ = x.X
					continue
				}
				break
			}
			if id, ok := typ.(*ast.Ident); ok {
				p.member(id.Name, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					p.names[s.Name.Name] = true
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fld := range st.Fields.List {
							for _, n := range fld.Names {
								p.member(s.Name.Name, n.Name)
							}
							if len(fld.Names) == 0 { // embedded: its type's name
								typ := fld.Type
								if se, ok := typ.(*ast.StarExpr); ok {
									typ = se.X
								}
								switch x := typ.(type) {
								case *ast.Ident:
									p.member(s.Name.Name, x.Name)
								case *ast.SelectorExpr:
									p.member(s.Name.Name, x.Sel.Name)
								}
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.names[n.Name] = true
					}
				}
			}
		}
	}
}

// checkIdent returns why ref, if it is a qualified name in one of the
// module's packages, does not resolve, or "" when it does or is no such
// name (a config key such as optim.lr, a standard-library name).
func (idx pkgIndex) checkIdent(ref string) string {
	ref = strings.TrimSpace(ref)
	if m := bareRef.FindStringSubmatch(ref); m != nil {
		return idx.checkBare(m[1], m[2])
	}
	m := goRef.FindStringSubmatch(ref)
	if m == nil {
		return ""
	}
	p := idx[m[1]]
	if p == nil {
		return ""
	}
	typ, member := m[2]+m[3], m[4]
	if !p.names[typ] {
		return "package " + m[1] + " declares no " + typ
	}
	if member != "" && !p.members[typ][member] {
		return m[1] + "." + typ + " has no method or field " + member
	}
	return ""
}

// topDirs are the repository's top-level directories: a path whose first
// element is one of them is a repository path. Directories that .gitignore
// names from the root (runs/, which training writes) are outputs, not the
// repository, so the check does not depend on what was run before it.
var topDirs = func() map[string]bool {
	ignored := map[string]bool{}
	if b, err := os.ReadFile(".gitignore"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(strings.TrimSpace(line), "/"); ok {
				ignored[strings.TrimSuffix(name, "/")] = true
			}
		}
	}
	dirs := map[string]bool{}
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !ignored[e.Name()] {
			dirs[e.Name()] = true
		}
	}
	return dirs
}()

// runtimePaths are the paths the documents name that a user makes or
// supplies, not the repository: data roots the shipped configs point at,
// and the binary docs/distributed.md builds.
var runtimePaths = map[string]bool{
	"data/cifar-10-batches-bin": true,
	"data/imagenet":             true,
	"train-mpi":                 true,
}

// placeholder matches a path with an element such as NAME or PACKAGE, to
// be replaced by the reader.
var placeholder = regexp.MustCompile(`(^|/)[A-Z]{2,}(/|$)`)

var pathToken = regexp.MustCompile(`^[A-Za-z0-9_.*-]+(/[A-Za-z0-9_.*-]*)+$`)

// repoPaths returns the repository paths in a code span or line: each
// whitespace-separated word (a flag's value after '=' included) that is
// ./something, or a path whose first element is a top-level directory.
// A trailing / or /... and any element from a * on are dropped.
func repoPaths(text string) []string {
	var paths []string
	for _, w := range strings.Fields(text) {
		if i := strings.LastIndexByte(w, '='); i >= 0 {
			w = w[i+1:]
		}
		w = strings.Trim(w, `"'(),;:`)
		w = strings.TrimSuffix(w, "/...")
		if w == "." || w == "./..." || !pathToken.MatchString(w) {
			continue
		}
		rel := strings.TrimPrefix(w, "./")
		if rel == w && !topDirs[strings.SplitN(w, "/", 2)[0]] {
			continue
		}
		if i := strings.IndexByte(rel, '*'); i >= 0 {
			rel = rel[:strings.LastIndexByte(rel[:i], '/')+1]
		}
		rel = strings.TrimSuffix(rel, "/")
		if placeholder.MatchString(rel) {
			continue
		}
		if rel == "" || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, ".") {
			continue
		}
		paths = append(paths, rel)
	}
	sort.Strings(paths)
	return paths
}
