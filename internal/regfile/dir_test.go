package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestReadDirFIFO: a FIFO listed as a directory is a *NotDirError at once,
// by the Stat (ReadDir) and by the open alone (readDir, as when a directory
// is swapped for a FIFO after the Stat); a blocking open would hang the
// test instead.
func TestReadDirFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for name, read := range map[string]func(string) ([]fs.DirEntry, error){"ReadDir": ReadDir, "the open alone": readDir} {
		_, err := read(p)
		var nd *NotDirError
		if !errors.As(err, &nd) || nd.Path != p || nd.Mode&fs.ModeNamedPipe == 0 {
			t.Errorf("%s of a FIFO: %v, want a *NotDirError naming %s as a named pipe", name, err, p)
		}
	}
	if err := WalkDir(dir, func(string, fs.DirEntry, error) error { return nil }); err != nil {
		t.Errorf("WalkDir past a FIFO: %v", err)
	}
}

// TestWalkDirAsFilepath: WalkDir calls fn for the same paths, in the same
// order, with the same errors and skips as filepath.WalkDir.
func TestWalkDirAsFilepath(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/1", "a/2", "b/skip/x", "b/y", "c", "d/e/f/g"} {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	os.Symlink("a", filepath.Join(dir, "link"))
	walk := func(w func(string, fs.WalkDirFunc) error) []string {
		var seen []string
		err := w(dir, func(p string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(dir, p)
			seen = append(seen, rel)
			switch {
			case err != nil:
				return err
			case d.Name() == "skip":
				return fs.SkipDir
			case d.Name() == "f":
				return fs.SkipAll
			}
			return nil
		})
		return append(seen, "err:"+errString(err))
	}
	if got, want := walk(WalkDir), walk(filepath.WalkDir); !slices.Equal(got, want) {
		t.Errorf("WalkDir visits %q, filepath.WalkDir %q", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
