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
