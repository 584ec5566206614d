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

// slowModel is a model whose run on MNIST (a step, then the evaluation of
// 10,000 images) outlasts a signal sent at its first step's log line by
// far.
const slowModel = "model: {img_size: 28, patch_size: 4, in_chans: 1, embed_dim: 64, depth: 2, num_heads: 2, mlp_ratio: 2, num_classes: 10}\n"

// TestPrintedResumeCommandWorks: SIGTERM ends a run started with -set
// flags with status 143 and a "resume with:" command that carries those
// flags (it used to drop them, and running it was refused); running that
// command finishes the run.
func TestPrintedResumeCommandWorks(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, slowModel+`
data: {limit_train: 64}
train: {epochs: 1, batch_size: 16, log_every: 1}
`)
	out := filepath.Join(dir, "out")
	c := startTrainer(t, "-config", cfg, "-out", out, "-v", "-set", "train.seed=3", "-set", "data.limit_val=20", "-set", "optim.lr=2e-3")
	c.waitFor(t, "msg=train") // step 1 is done
	c.cmd.Process.Signal(syscall.SIGTERM)
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
	if err != nil || st.Epoch != 1 {
		t.Fatalf("after the resume command: %v, epoch %d, want the run complete", err, st.Epoch)
	}
}

// TestKilledBeforeFirstCheckpoint: a trainer killed (SIGKILL) during its
// first epoch, before any checkpoint, leaves config.yaml and header-only
// CSVs; -resume says there is no run and to start without -resume, and the
// plain command then starts afresh (it used to be refused both ways).
func TestKilledBeforeFirstCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, slowModel+`
data: {limit_train: 4096, limit_val: 16}
train: {epochs: 1, batch_size: 512}
`)
	out := filepath.Join(dir, "out")
	c := startTrainer(t, "-config", cfg, "-out", out)
	c.waitFor(t, "steps/epoch") // the run's files are written, 8 steps of 512 images to go before a checkpoint
	c.cmd.Process.Kill()
	c.wait(t)
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
