package main

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitgo/vit/internal/gate"
	"github.com/vitgo/vit/internal/testmodel"
)

// TestImagesSIGTERMStopsDecodes: the first SIGTERM to `eval -images` stops
// the decodes still queued: no file is opened after it, so the process
// exits 143 once the decode in progress ends, not after the rest of its
// loader batch. The child (one worker) is held at a gate on the first
// file while the signal lands; the third file has a gate that nobody
// passes, so a child that opened it after the signal would never exit.
func TestImagesSIGTERMStopsDecodes(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns an evaluation process")
	}
	dir := t.TempDir()
	ckpt := untrainedCheckpoint(t, dir, 16, 0)
	imgs := filepath.Join(dir, "imgs")
	os.Mkdir(imgs, 0o755)
	var pix bytes.Buffer
	if err := png.Encode(&pix, testmodel.Colour(0, 28, 28, 1)); err != nil {
		t.Fatal(err)
	}
	first, err := gate.New(filepath.Join(imgs, "0.png"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(imgs, "1.png"), pix.Bytes(), 0o644)
	if _, err := gate.New(filepath.Join(imgs, "2.png")); err != nil { // never passed
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEvalSIGINT$")
	cmd.Env = append(os.Environ(), "VIT_EVAL_MAIN=-checkpoint "+ckpt+" -images "+imgs+" -workers 1 -batch 1")
	c := startChild(t, cmd)
	// The whole test's bound, only so that a broken child cannot hang it.
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Minute)
	defer cancel()
	held, err := first.Wait(ctx)
	if err != nil {
		t.Fatalf("%v:\n%s", err, c.stderr())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	c.waitFor(t, ctx, "again to exit at once") // the signal is handled
	if err := held.Pass(pix.Bytes()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.ctx.Done():
	case <-ctx.Done():
		t.Fatalf("no exit after SIGTERM: a file was opened after it:\n%s", c.stderr())
	}
	var ee *exec.ExitError
	if err := c.wait(); !errors.As(err, &ee) || ee.ExitCode() != 143 || !strings.Contains(c.stderr(), "interrupted") {
		t.Fatalf("exit %v, want status 143 and the interruption named:\n%s", err, c.stderr())
	}
}
