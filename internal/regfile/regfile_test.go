package regfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/regfile"
)

// TestOpenFIFO: a named pipe is refused, not opened for a read that would
// wait for a writer forever.
func TestOpenFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.safetensors")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for name, f := range map[string]func() error{
		"Open":     func() error { f, _, err := regfile.Open(p); closeIf(f); return err },
		"ReadFile": func() error { _, err := regfile.ReadFile(p); return err },
		"Check":    func() error { return regfile.Check(p) },
	} {
		err := f()
		var nr *regfile.NotRegularError
		if !errors.As(err, &nr) || nr.Path != p || nr.Mode&fs.ModeNamedPipe == 0 {
			t.Errorf("%s(FIFO) = %v, want a *NotRegularError naming the pipe", name, err)
		}
	}
}

func TestOpenDirAndFile(t *testing.T) {
	dir := t.TempDir()
	var nr *regfile.NotRegularError
	if _, err := regfile.ReadFile(dir); !errors.As(err, &nr) || !nr.Mode.IsDir() {
		t.Errorf("ReadFile(dir) = %v, want a *NotRegularError", err)
	}
	p := filepath.Join(dir, "a")
	want := []byte("hello, world")
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := regfile.ReadFile(p)
	if err != nil || string(got) != string(want) {
		t.Errorf("ReadFile = %q, %v; want %q", got, err, want)
	}
	if _, err := regfile.ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v, want fs.ErrNotExist", err)
	}
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}
