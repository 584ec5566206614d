package cliflag_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vitgo/vit/internal/cliflag"
)

func TestDistinctOutputs(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.csv")
	os.WriteFile(x, nil, 0o644)
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(x, link); err != nil {
		t.Fatal(err)
	}
	var ce *cliflag.CollisionError
	for _, tc := range []struct {
		a, b string
		outB bool
		want bool
	}{
		{x, x, true, true},
		{x, filepath.Join(dir, ".", "x.csv"), true, true},
		{x, link, true, true},
		{x, filepath.Join(dir, "y.csv"), true, false},
		{x, x, false, false}, // two inputs may share a file
	} {
		err := cliflag.DistinctOutputs(cliflag.Path{Flag: "-a", Path: tc.a}, cliflag.Path{Flag: "-b", Path: tc.b, Output: tc.outB})
		if got := errors.As(err, &ce); got != tc.want {
			t.Errorf("%s, %s (output %v): %v, want collision %v", tc.a, tc.b, tc.outB, err, tc.want)
		}
	}
}

// TestOutputInDir: an output named like a file the directory's owner
// writes, in that directory under any spelling, collides; another name, or
// the same name elsewhere, does not.
func TestOutputInDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	writes := func(name string) bool { return name == "last.safetensors" || name == "metrics.csv" }
	var ce *cliflag.CollisionError
	for _, tc := range []struct {
		path string
		want bool
	}{
		{filepath.Join(out, "last.safetensors"), true},
		{filepath.Join(out, ".", "metrics.csv"), true},
		{filepath.Join(link, "last.safetensors"), true},
		{out, true},
		{filepath.Join(out, "cpu.pprof"), false},
		{filepath.Join(dir, "last.safetensors"), false},
		{"", false},
	} {
		err := cliflag.OutputInDir("-cpuprofile", tc.path, "train.out_dir", out, writes)
		if got := errors.As(err, &ce); got != tc.want || (got && (ce.A != "-cpuprofile" || ce.Path != tc.path)) {
			t.Errorf("%q: %v, want collision %v", tc.path, err, tc.want)
		}
	}
}
