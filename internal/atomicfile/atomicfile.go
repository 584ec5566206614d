package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/vitgo/vit/internal/regfile"
)

// Mode is the permission of every file this package writes.
const Mode os.FileMode = 0o644

// tmpInfix sits between a target's base name and the random digits of its
// temporary file.
const tmpInfix = ".tmp-"

// live holds the temporary files of writes in progress, for Cleanup.
var live sync.Map // path → struct{}

// File is an output file being written: its bytes go to a temporary file
// until Commit renames it over the target. Abort (or a failed Commit) removes
// the temporary file. A File is not safe for concurrent use.
type File struct {
	path string
	f    *os.File
	w    *bufio.Writer
	done bool
}

// Create starts writing path.
func Create(path string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tmpInfix+"*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	live.Store(f.Name(), struct{}{})
	return &File{path: path, f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Write buffers p for the temporary file.
func (a *File) Write(p []byte) (int, error) { return a.w.Write(p) }

// Name returns the target path.
func (a *File) Name() string { return a.path }

// Commit flushes, fsyncs and renames the temporary file over the target,
// then fsyncs the directory. After a failure the target is unchanged.
func (a *File) Commit() (err error) {
	if a.done {
		return fmt.Errorf("write %s: already committed or aborted", a.path)
	}
	defer func() {
		if err != nil {
			a.Abort()
			err = fmt.Errorf("write %s: %w", a.path, err)
		}
	}()
	if err = a.w.Flush(); err != nil {
		return err
	}
	if err = a.f.Chmod(Mode); err != nil {
		return err
	}
	if err = a.f.Sync(); err != nil {
		return err
	}
	if err = a.f.Close(); err != nil {
		return err
	}
	if err = os.Rename(a.f.Name(), a.path); err != nil {
		return err
	}
	a.done = true
	live.Delete(a.f.Name())
	return syncDir(filepath.Dir(a.path))
}

// Abort drops the temporary file; the target is unchanged. It does nothing
// after Commit, so it can be deferred.
func (a *File) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	os.Remove(a.f.Name())
	live.Delete(a.f.Name())
}

// Write writes path atomically with the bytes write produces.
func Write(path string, write func(io.Writer) error) error {
	a, err := Create(path)
	if err != nil {
		return err
	}
	defer a.Abort() // after a panic in write too; nothing after Commit
	if err := write(a); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return a.Commit()
}

// WriteBytes writes b to path atomically.
func WriteBytes(path string, b []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// IsTemp reports whether name (a base name) is one of this package's
// temporary files: ".<base>.tmp-<digits>".
func IsTemp(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	i := strings.LastIndex(name, tmpInfix)
	if i <= 1 {
		return false
	}
	digits := name[i+len(tmpInfix):]
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// RemoveStale removes every temporary file of ours in dir (left by a process
// that was killed mid-write) and returns their paths. Call it only where no
// other process writes (a run directory under its lock).
func RemoveStale(dir string) ([]string, error) {
	ents, err := regfile.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range ents {
		if e.Type().IsRegular() && IsTemp(e.Name()) {
			p := filepath.Join(dir, e.Name())
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return removed, err
			}
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// RemoveStaleFor removes the temporary files of ours left beside path by an
// earlier write of path, and returns their paths.
func RemoveStaleFor(path string) ([]string, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	ents, err := regfile.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var removed []string
	prefix := "." + base + tmpInfix
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) && IsTemp(e.Name()) {
			p := filepath.Join(dir, e.Name())
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return removed, err
			}
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// Cleanup removes the temporary files of the writes in progress. It is for a
// process about to call os.Exit without running deferred calls; a write in
// progress then fails.
func Cleanup() {
	live.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		live.Delete(k)
		return true
	})
}

// syncDir fsyncs a directory so a rename inside it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return d.Close()
}
