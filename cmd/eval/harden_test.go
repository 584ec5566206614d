package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/testmodel"
)

// TestEvalFIFOCheckpoint: -checkpoint naming a named pipe exits 1 with a
// message naming it, at once, in both modes (it used to block in open).
func TestEvalFIFOCheckpoint(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	img := filepath.Join(dir, "x.png")
	writeColour(t, img, 0)
	for _, args := range [][]string{{"-checkpoint", fifo}, {"-checkpoint", fifo, "-images", img}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 1 || !strings.Contains(errb.String(), "named pipe") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and the pipe named", args, code, errb.String())
		}
	}
}

// TestOutputFlagsCollide: two output flags naming one file are refused
// before anything runs (they used to overwrite each other).
func TestOutputFlagsCollide(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.csv")
	for _, args := range [][]string{
		{"-checkpoint", "m.safetensors", "-results", x, "-predictions", x},
		{"-checkpoint", x, "-predictions", x},
		{"-checkpoint", "m.safetensors", "-confusion-png", x, "-results", filepath.Join(dir, ".", "x.csv")},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "both name") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the collision", args, code, errb.String())
		}
	}
}

func writeColour(t *testing.T, p string, i int) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, testmodel.Colour(i%3, 10, 10, uint32(i))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImagesPathBytesAndUnreadableDir: a file name that is not UTF-8 keeps
// its exact bytes in the JSON predictions (path_bytes); an unreadable
// subdirectory is skipped with a message instead of ending the run.
func TestImagesPathBytesAndUnreadableDir(t *testing.T) {
	dir := t.TempDir()
	ckpt, err := testmodel.Checkpoint(filepath.Join(dir, "model"))
	if err != nil {
		t.Fatal(err)
	}
	pics := filepath.Join(dir, "pics")
	odd := filepath.Join(pics, "caf\xe9.png") // Latin-1, not UTF-8
	writeColour(t, odd, 1)
	locked := filepath.Join(pics, "locked")
	writeColour(t, filepath.Join(locked, "y.png"), 2)
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	_, lockedErr := os.ReadDir(locked)
	pred := filepath.Join(dir, "p.jsonl")
	var out, errb bytes.Buffer
	if code := run([]string{"-checkpoint", ckpt, "-images", pics, "-predictions", pred}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if lockedErr == nil {
		t.Logf("%s is readable to this user (root?): the unreadable-directory case is not exercised", locked)
	} else if !strings.Contains(errb.String(), "skipped directory") {
		t.Errorf("stderr %q does not report the unreadable %s", errb.String(), locked)
	}
	b, err := os.ReadFile(pred)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Path      string `json:"path"`
		PathBytes []byte `json:"path_bytes"`
	}
	if err := json.Unmarshal(bytes.SplitN(b, []byte("\n"), 2)[0], &rec); err != nil {
		t.Fatal(err)
	}
	if string(rec.PathBytes) != odd {
		t.Fatalf("path_bytes %q, want the exact name %q", rec.PathBytes, odd)
	}
}

// stopWriter collects stderr; when a line mentions "skipped" it sends
// SIGTERM to this process and holds that write until the handler has
// acknowledged the signal on the same writer, so the signal lands during
// the classification, by events, not by the clock.
type stopWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	once  sync.Once
	acked chan struct{}
}

func (w *stopWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	if bytes.Contains(p, []byte("again to exit at once")) {
		close(w.acked)
	}
	if bytes.Contains(p, []byte("skipped")) {
		w.once.Do(func() {
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			<-w.acked
		})
	}
	return len(p), nil
}

// TestImagesSIGTERM: SIGTERM during -images stops it with status 143
// (128+15), as for every command, writing no predictions file.
func TestImagesSIGTERM(t *testing.T) {
	dir := t.TempDir()
	ckpt, err := testmodel.Checkpoint(filepath.Join(dir, "model"))
	if err != nil {
		t.Fatal(err)
	}
	pics := filepath.Join(dir, "pics")
	os.MkdirAll(pics, 0o755)
	os.WriteFile(filepath.Join(pics, "0bad.png"), []byte("not a png"), 0o644) // first: its skip triggers the signal
	for i := 1; i <= 40; i++ {
		writeColour(t, filepath.Join(pics, fmt.Sprintf("%02d.png", i)), i)
	}
	pred := filepath.Join(dir, "p.csv")
	w := &stopWriter{acked: make(chan struct{})}
	var out bytes.Buffer
	code := run([]string{"-checkpoint", ckpt, "-images", pics, "-batch", "1", "-predictions", pred}, &out, w)
	if code != 143 {
		t.Fatalf("exit %d, want 143: %s", code, w.buf.String())
	}
	if _, err := os.Stat(pred); !os.IsNotExist(err) {
		t.Fatalf("predictions written after SIGTERM: %v", err)
	}
}

// TestImagesBatchMemory: -batch 65536 for three images builds graphs of
// at most three images: the classification allocates a few megabytes, not
// the hundreds that graphs and buffers for 65,536 images take.
func TestImagesBatchMemory(t *testing.T) {
	dir := t.TempDir()
	ckpt, err := testmodel.Checkpoint(filepath.Join(dir, "model"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		writeColour(t, filepath.Join(dir, "pics", fmt.Sprintf("%d.png", i)), i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out, errb bytes.Buffer
	code := run([]string{"-checkpoint", ckpt, "-images", filepath.Join(dir, "pics"), "-batch", "65536"}, &out, &errb)
	runtime.ReadMemStats(&after)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Fatalf("classifying 3 images at -batch 65536 allocated %d bytes", d)
	}
}

// TestBF16KernelEnvRefused: an unknown VIT_BF16_KERNEL is refused before
// the checkpoint is read, naming the variable and its value.
func TestBF16KernelEnvRefused(t *testing.T) {
	t.Setenv(kernels.BF16KernelEnv, "AMX")
	var out, errb bytes.Buffer
	if code := run([]string{"-checkpoint", "/nonexistent"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), kernels.BF16KernelEnv+`="AMX"`) {
		t.Errorf("exit %d, stderr %q, want 2 and the variable named", code, errb.String())
	}
}
