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

// TestOpenFileWriteFIFO: opening for append or write refuses a FIFO (with no
// reader, so a blocking open would wait forever) and a directory, creates
// a missing file with os.O_CREATE and appends to a regular one.
func TestOpenFileWriteFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "steps.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	appendFlags := os.O_APPEND | os.O_CREATE | os.O_WRONLY
	for _, tc := range []struct {
		name string
		path string
		flag int
	}{
		{"append to a FIFO", fifo, appendFlags},
		{"truncate a FIFO", fifo, os.O_CREATE | os.O_TRUNC | os.O_WRONLY},
		{"read-write a FIFO", fifo, os.O_RDWR | os.O_CREATE},
		{"append to a directory", dir, appendFlags},
	} {
		f, _, err := regfile.OpenFile(tc.path, tc.flag, 0o644)
		closeIf(f)
		var nr *regfile.NotRegularError
		if !errors.As(err, &nr) || nr.Path != tc.path {
			t.Errorf("%s: OpenFile = %v, want a *NotRegularError naming %s", tc.name, err, tc.path)
		}
	}
	p := filepath.Join(dir, "metrics.csv")
	if _, _, err := regfile.OpenFile(p, os.O_WRONLY, 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile(missing, no O_CREATE) = %v, want fs.ErrNotExist", err)
	}
	for _, s := range []string{"a\n", "b\n"} {
		f, st, err := regfile.OpenFile(p, appendFlags, 0o644)
		if err != nil || !st.Mode().IsRegular() {
			t.Fatalf("OpenFile(regular) = %v, %v", st, err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if got, err := regfile.ReadFile(p); err != nil || string(got) != "a\nb\n" {
		t.Errorf("after two appends: %q, %v; want %q", got, err, "a\nb\n")
	}
}
