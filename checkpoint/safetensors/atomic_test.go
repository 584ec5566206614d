package safetensors

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitgo/vit/internal/atomicfile"
)

// fullDisk accepts limit bytes and then fails like a full disk.
type fullDisk struct {
	w     io.Writer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n, _ := d.w.Write(p[:d.limit])
		d.limit = 0
		return n, syscall.ENOSPC
	}
	d.limit -= len(p)
	return d.w.Write(p)
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "last.safetensors")
	old := randomTensors(3)
	if err := Write(path, old, map[string]string{"step": "100"}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	next := randomTensors(4)
	var full bytes.Buffer
	if err := Encode(&full, next, map[string]string{"step": "200"}); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 7, 8, 100, full.Len() - 1} {
		// Exactly what Write does, with the disk filling up after limit bytes
		// (the bufio layer inside atomicfile.Write makes this hit at Flush for small files).
		err := atomicfile.Write(path, func(w io.Writer) error {
			h, err := newHeader(next, map[string]string{"step": "200"})
			if err != nil {
				return err
			}
			return h.writeTo(&fullDisk{w: w, limit: limit})
		})
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
			t.Fatalf("limit %d: err %v, want ENOSPC naming %s", limit, err, path)
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(after, before) {
			t.Fatalf("limit %d: the previous file changed", limit)
		}
		if names := dirEntries(t, dir); len(names) != 1 {
			t.Fatalf("limit %d: directory holds %q, want only last.safetensors", limit, names)
		}
	}
	if f, err := ReadFile(path); err != nil || f.Metadata["step"] != "100" {
		t.Fatalf("old file after failed writes: %v, %v", f, err)
	}
	// A later successful write replaces it.
	if err := Write(path, next, map[string]string{"step": "200"}); err != nil {
		t.Fatal(err)
	}
	if f, err := ReadFile(path); err != nil || f.Metadata["step"] != "200" {
		t.Fatalf("after a good write: %v, %v", f, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644", st.Mode(), err)
	}
}

func TestWriteBadTensorTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "last.safetensors")
	if err := Write(path, randomTensors(5), nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := append(randomTensors(6), FromFloat32("head.weight", []int{10, 64}, make([]float32, 10)))
	err := Write(path, bad, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `tensor "head.weight"`) {
		t.Fatalf("err %v, want one naming %s and head.weight", err, path)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) || len(dirEntries(t, dir)) != 1 {
		t.Fatal("a rejected write changed the directory")
	}
}

func TestWriteRenameFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "taken")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(target, randomTensors(7), nil)
	if err == nil || !strings.Contains(err.Error(), target) {
		t.Fatalf("err %v, want a rename error naming %s", err, target)
	}
	if names := dirEntries(t, dir); len(names) != 1 || names[0] != "taken" {
		t.Fatalf("directory holds %q after a failed rename", names)
	}
}

func TestWriteMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "x.safetensors")
	if err := Write(path, nil, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v, want one naming %s", err, path)
	}
}
