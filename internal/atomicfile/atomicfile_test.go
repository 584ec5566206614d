package atomicfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func TestWriteIsAtomicAnd0644(t *testing.T) {
	old := syscall.Umask(0o077) // a strict umask must not make outputs private
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := WriteBytes(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644", fi.Mode().Perm())
	}
	// A failed write leaves the old file and no temporary file.
	boom := errors.New("disk full")
	err = Write(path, func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte("x"), 3<<20)) // past the buffer: bytes reach the temp file
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v, want %v naming %s", err, boom, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("old file changed: %q", b)
	}
	if got := names(t, dir); len(got) != 1 {
		t.Fatalf("files left: %v", got)
	}
	// A streamed file: invisible until Commit, gone after Abort.
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "two")
	if got := names(t, dir); len(got) != 2 || !IsTemp(got[0]) || !strings.HasPrefix(got[0], ".out.json.tmp-") {
		t.Fatalf("while writing: %v, want out.json and .out.json.tmp-N", got)
	}
	f.Abort()
	if b, _ := os.ReadFile(path); string(b) != "one" || len(names(t, dir)) != 1 {
		t.Fatalf("after Abort: %q, %v", b, names(t, dir))
	}
	f, _ = Create(path)
	io.WriteString(f, "two")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // no effect after Commit
	if b, _ := os.ReadFile(path); string(b) != "two" || len(names(t, dir)) != 1 {
		t.Fatalf("after Commit: %q, %v", b, names(t, dir))
	}
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".last.safetensors.tmp-123": true, ".p.csv.tmp-9": true,
		"last.safetensors": false, ".tmp-123": false, ".x.tmp-": false, ".x.tmp-12a": false, "x.tmp-1": false,
	} {
		if IsTemp(name) != want {
			t.Errorf("IsTemp(%q) = %v, want %v", name, !want, want)
		}
	}
}

// TestRemoveStaleAfterSIGKILL kills a process in the middle of a write: it
// leaves its temporary file, which RemoveStale (and RemoveStaleFor) remove,
// leaving everything else alone.
func TestRemoveStaleAfterSIGKILL(t *testing.T) {
	if p := os.Getenv("ATOMICFILE_CHILD"); p != "" {
		f, err := Create(p)
		if err != nil {
			os.Exit(3)
		}
		f.Write([]byte("partial"))
		os.Stdout.WriteString("writing\n")
		for { // until killed
			time.Sleep(time.Hour)
		}
	}
	dir := t.TempDir()
	for _, keep := range []string{"last.safetensors", "notes.txt", ".hidden"} {
		os.WriteFile(filepath.Join(dir, keep), []byte("k"), 0o644)
	}
	for _, target := range []string{"last.safetensors", "p.csv"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRemoveStaleAfterSIGKILL$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD="+filepath.Join(dir, target))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 8)
		io.ReadFull(out, buf) // the child has created its temporary file
		cmd.Process.Kill()
		cmd.Wait()
	}
	if got := names(t, dir); len(got) != 5 {
		t.Fatalf("after SIGKILL: %v, want two temporary files beside the three others", got)
	}
	removed, err := RemoveStaleFor(filepath.Join(dir, "p.csv"))
	if err != nil || len(removed) != 1 || !strings.Contains(removed[0], ".p.csv.tmp-") {
		t.Fatalf("RemoveStaleFor: %v, %v", removed, err)
	}
	removed, err = RemoveStale(dir)
	if err != nil || len(removed) != 1 || !strings.Contains(removed[0], ".last.safetensors.tmp-") {
		t.Fatalf("RemoveStale: %v, %v", removed, err)
	}
	if got := names(t, dir); strings.Join(got, " ") != ".hidden last.safetensors notes.txt" {
		t.Fatalf("left: %v", got)
	}
}

func TestCleanupRemovesWritesInProgress(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "pred.csv"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("a"))
	Cleanup()
	if got := names(t, dir); len(got) != 0 {
		t.Fatalf("after Cleanup: %v", got)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after Cleanup succeeded")
	}
}
