package signals

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vitgo/vit/internal/atomicfile"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// doneAtWrite records, for each write, whether ctx was already done.
type doneAtWrite struct {
	syncBuf
	ctx  context.Context
	done []bool
}

func (d *doneAtWrite) Write(p []byte) (int, error) {
	d.mu.Lock()
	d.done = append(d.done, d.ctx.Err() != nil)
	d.mu.Unlock()
	return d.syncBuf.Write(p)
}

// TestFirstCancelsSecondExits: the first signal cancels the context, and
// only then writes its line (a parent process acts on the line); the second
// removes the temporary files and exits.
func TestFirstCancelsSecondExits(t *testing.T) {
	codes := make(chan int, 1)
	exit = func(code int) { codes <- code }
	defer func() { exit = os.Exit }()
	w := &doneAtWrite{ctx: context.Background()}
	ctx, stop := Context(context.Background(), w, "stopping")
	defer stop()
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
	dir := t.TempDir()
	f, err := atomicfile.Create(filepath.Join(dir, "pred.csv")) // a write in progress
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()

	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // a bound only
		t.Fatal("the first SIGINT did not cancel the context")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("the first signal removed the temporary file: %v", ents)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case code := <-codes:
		if code != 130 {
			t.Fatalf("exit status %d, want 130", code)
		}
	case <-time.After(time.Minute): // a bound only
		t.Fatal("the second SIGINT did not exit")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the second signal left %v", ents)
	}
	if out := w.String(); !strings.Contains(out, "stopping") || !strings.Contains(out, "at once") {
		t.Fatalf("messages %q", out)
	}
	w.mu.Lock()
	firstDone := len(w.done) > 0 && w.done[0]
	w.mu.Unlock()
	if !firstDone {
		t.Errorf("the first signal's line was written before the context was done")
	}
}

// TestExitStatusNamesTheSignal: after the first SIGTERM the command's
// status is 143 (SIGINT's is 130), and 130 for a context no signal ended.
func TestExitStatusNamesTheSignal(t *testing.T) {
	ctx, stop := Context(context.Background(), nil, "")
	defer stop()
	if got := ExitStatus(ctx); got != 130 {
		t.Fatalf("no signal: %d, want 130", got)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("SIGTERM did not cancel the context")
	}
	if got := ExitStatus(ctx); got != 143 {
		t.Fatalf("after SIGTERM: %d, want 143", got)
	}
}
