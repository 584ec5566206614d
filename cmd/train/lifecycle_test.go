package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vitgo/vit/train"
)

// shellWords splits a command line printed by resumeCommand: words
// separated by spaces, single-quoted where shellQuote quoted them.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, has := false, false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\'':
			in, has = !in, true
		case ch == '\\' && !in && i+1 < len(line):
			i++
			w.WriteByte(line[i])
		case ch == ' ' && !in:
			if has || w.Len() > 0 {
				words = append(words, w.String())
			}
			w.Reset()
			has = false
		default:
			w.WriteByte(ch)
		}
	}
	if in {
		t.Fatalf("unbalanced quotes in %q", line)
	}
	if has || w.Len() > 0 {
		words = append(words, w.String())
	}
	return words
}

// TestPrintedResumeCommandWorks: SIGTERM ends a run started with -set
// flags with status 143 and a "resume with:" command that carries those
// flags; running that command finishes the run. The training images hold a
// gate, so the signal lands while the second epoch waits for its batch.
func TestPrintedResumeCommandWorks(t *testing.T) {
	dir := t.TempDir()
	folder, g, pix := gatedFolder(t, "train")
	cfg := writeConfig(t, dir, model+folder+`
train: {epochs: 2, batch_size: 17, log_every: 1}
`)
	out := filepath.Join(dir, "out")
	c := startTrainer(t, "-config", cfg, "-out", out, "-v", "-set", "train.seed=3", "-set", "data.limit_val=2", "-set", "optim.lr=2e-3")
	c.hold(t, g).Pass(pix) // data.Open checks each image's header
	c.hold(t, g).Pass(pix) // the first epoch's one batch
	held := c.hold(t, g)   // the second epoch's: step 1 and its checkpoint are done
	c.cmd.Process.Signal(syscall.SIGTERM)
	c.waitFor(t, "again to exit at once")
	held.Pass(pix)
	code := c.wait(t)
	if code != 143 {
		t.Fatalf("SIGTERM: exit %d, want 143:\n%s", code, c.stderr())
	}
	var line string
	for _, l := range strings.Split(c.stderr(), "\n") {
		if s, ok := strings.CutPrefix(l, "resume with: "); ok {
			line = s
		}
	}
	words := shellWords(t, line)
	i := 0
	for i < len(words) && words[i] != "-config" {
		i++
	}
	if i == len(words) || !strings.Contains(line, "-set train.seed=3") || !strings.Contains(line, "-set optim.lr=2e-3") {
		t.Fatalf("resume command %q lacks the config or the -set flags:\n%s", line, c.stderr())
	}
	var o, e bytes.Buffer
	if code := run(words[i:], &o, &e); code != 0 {
		t.Fatalf("running %q: exit %d:\n%s", line, code, e.String())
	}
	st, err := train.LoadState(filepath.Join(out, train.LastState))
	if err != nil || st.Epoch != 2 {
		t.Fatalf("after the resume command: %v, epoch %d, want the run complete", err, st.Epoch)
	}
}

// TestKilledBeforeFirstCheckpoint: a trainer killed (SIGKILL) during its
// first epoch, before any checkpoint, leaves config.yaml and header-only
// CSVs; -resume says there is no run and to start without -resume, and the
// plain command then starts afresh (it used to be refused both ways).
func TestKilledBeforeFirstCheckpoint(t *testing.T) {
	dir := t.TempDir()
	folder, g, pix := gatedFolder(t, "train")
	cfg := writeConfig(t, dir, model+folder+`
train: {epochs: 1, batch_size: 17}
`)
	out := filepath.Join(dir, "out")
	c := startTrainer(t, "-config", cfg, "-out", out)
	c.hold(t, g).Pass(pix) // data.Open checks each image's header
	held := c.hold(t, g)   // the first step's batch: the run's files are written, no checkpoint yet
	c.cmd.Process.Kill()
	c.wait(t)
	held.Pass(pix)
	if _, err := os.Stat(filepath.Join(out, train.LastState)); err == nil {
		t.Fatal("a checkpoint was written before the kill")
	}
	var o, e bytes.Buffer
	if code := run([]string{"-config", cfg, "-out", out, "-resume"}, &o, &e); code != 1 || !strings.Contains(e.String(), "start without -resume") {
		t.Fatalf("-resume: exit %d, want 1 and advice to start without -resume:\n%s", code, e.String())
	}
	e.Reset()
	if code := run([]string{"-config", cfg, "-out", out, "-set", "train.max_steps=1"}, &o, &e); code != 0 {
		t.Fatalf("plain rerun: exit %d:\n%s", code, e.String())
	}
}
