package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// child is a training process started from this test binary (see
// TestSIGINTWritesCheckpoint) whose stderr is collected and watched.
type child struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	err  bytes.Buffer
	seen chan string // stderr lines
}

func startTrainer(t *testing.T, args ...string) *child {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns a training process")
	}
	c := &child{seen: make(chan string, 1000)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestSIGINTWritesCheckpoint$")
	c.cmd.Env = append(os.Environ(), "VIT_TRAIN_MAIN="+strings.Join(args, " "))
	pr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill() })
	go func() {
		r := bufio.NewReader(pr)
		for {
			line, err := r.ReadString('\n')
			c.mu.Lock()
			c.err.WriteString(line)
			c.mu.Unlock()
			select {
			case c.seen <- line:
			default:
			}
			if err != nil {
				close(c.seen)
				return
			}
		}
	}()
	return c
}

func (c *child) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err.String()
}

// waitFor returns once a stderr line contains s.
func (c *child) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case line, ok := <-c.seen:
			if !ok {
				t.Fatalf("the trainer ended before printing %q:\n%s", s, c.stderr())
			}
			if strings.Contains(line, s) {
				return
			}
		case <-timeout:
			t.Fatalf("no %q within 3 minutes:\n%s", s, c.stderr())
		}
	}
}

// wait returns the exit status and how long the process took to end.
func (c *child) wait(t *testing.T) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	err := c.cmd.Wait()
	for range c.seen { // drain: stderr is complete
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return c.cmd.ProcessState.ExitCode(), time.Since(start)
}

func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// slowModel makes a step and an evaluation batch take long enough for a
// signal to land inside them.
const slowModel = "model: {img_size: 28, patch_size: 4, in_chans: 1, embed_dim: 64, depth: 2, num_heads: 2, mlp_ratio: 2, num_classes: 10}\n"

// TestSIGINTDuringFinalEvaluation: a signal during the final evaluation
// stops it (rather than running to the end and exiting 0) with the status
// and message of an interrupted run, and -resume then completes the run.
func TestSIGINTDuringFinalEvaluation(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, slowModel+`
data: {limit_train: 64}
train: {epochs: 1, max_steps: 1, batch_size: 16, eval_batch_size: 4, log_every: 1}
`)
	out := filepath.Join(dir, "out")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		os.RemoveAll(out)
		c := startTrainer(t, "-config", cfg, "-out", out, "-v")
		c.waitFor(t, "msg=train")          // step 1 is done: the evaluation of 10,000 images follows
		time.Sleep(500 * time.Millisecond) // past the step's own interrupt check, well inside the evaluation
		c.cmd.Process.Signal(sig)
		code, took := c.wait(t)
		if code != 128+int(sig) || !strings.Contains(c.stderr(), "evaluation interrupted") || !strings.Contains(c.stderr(), "-resume") {
			t.Fatalf("%v during the final evaluation: exit %d after %v, want %d and an interrupted-run message:\n%s", sig, code, took, 128+int(sig), c.stderr())
		}
		if strings.Contains(c.stderr(), "goroutine ") {
			t.Fatalf("stack trace:\n%s", c.stderr())
		}
		t.Logf("%v: ended %v after the signal", sig, took.Round(time.Millisecond))
	}
	var o, e bytes.Buffer
	if code := run([]string{"-config", cfg, "-out", out, "-resume", "-set", "data.limit_val=100"}, &o, &e); code == 0 ||
		!strings.Contains(e.String(), "data.limit_val") {
		t.Fatalf("resume with another limit_val: exit %d, want a refusal naming data.limit_val:\n%s", code, e.String())
	}
}

// TestSecondSIGINTExitsAtOnce: the first SIGINT lets the step finish and
// writes a checkpoint; a second one exits at once with status 130.
func TestSecondSIGINTExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, slowModel+`
data: {limit_train: 4096, limit_val: 16}
train: {epochs: 100, batch_size: 512, log_every: 1}
`)
	c := startTrainer(t, "-config", cfg, "-out", filepath.Join(dir, "out"), "-v")
	c.waitFor(t, "msg=train")
	c.cmd.Process.Signal(syscall.SIGINT)
	c.waitFor(t, "again to exit at once") // the first is handled (a signal sent before may merge with it)
	c.cmd.Process.Signal(syscall.SIGINT)  // while the 512-image step still runs
	code, _ := c.wait(t)
	if code != 130 || !strings.Contains(c.stderr(), "exiting at once") || strings.Contains(c.stderr(), "training interrupted at step") {
		t.Fatalf("two SIGINTs: exit %d, want 130 at once without finishing the step:\n%s", code, c.stderr())
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "out", ".*.tmp-*")); len(names) != 0 {
		t.Fatalf("temporary files left: %v", names)
	}
}

// TestOutDirRefusals runs three misuses through the command: a second
// trainer on a busy directory, a fresh run into a used one, and -resume of a
// finished run. Each ends with a clear message (no stack trace).
func TestOutDirRefusals(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
model: {img_size: 28, patch_size: 7, in_chans: 1, embed_dim: 16, depth: 1, num_heads: 2, mlp_ratio: 2, num_classes: 10}
data: {limit_train: 64, limit_val: 16}
train: {epochs: 1000, batch_size: 16}
`)
	out := filepath.Join(dir, "out")
	c := startTrainer(t, "-config", cfg, "-out", out)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(filepath.Join(out, ".train.lock"))
		if strings.TrimSpace(string(b)) == strconv.Itoa(c.cmd.Process.Pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first trainer did not take the lock:\n%s", c.stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	check := func(what string, wantCode int, wants []string, args ...string) {
		t.Helper()
		var o, e bytes.Buffer
		code := run(args, &o, &e)
		msg := e.String()
		if code != wantCode || strings.Contains(msg, "goroutine ") {
			t.Fatalf("%s: exit %d, want %d:\n%s", what, code, wantCode, msg)
		}
		for _, w := range wants {
			if !strings.Contains(msg, w) {
				t.Fatalf("%s: stderr lacks %q:\n%s", what, w, msg)
			}
		}
	}
	check("second trainer", 1, []string{"PID " + strconv.Itoa(c.cmd.Process.Pid), out}, "-config", cfg, "-out", out, "-resume")
	c.cmd.Process.Signal(syscall.SIGINT)
	if code, _ := c.wait(t); code != 130 {
		t.Fatalf("first trainer: exit %d:\n%s", code, c.stderr())
	}
	check("fresh run into a used directory", 1, []string{"-overwrite", "last.safetensors"}, "-config", cfg, "-out", out)
	check("-overwrite", 0, nil, "-config", cfg, "-out", out, "-overwrite", "-set", "train.epochs=1")
	check("resume of a finished run", 0, []string{"complete"}, "-config", cfg, "-out", out, "-resume", "-set", "train.epochs=1")
	check("resume with another seed", 1, []string{"train.seed: 0 → 3"}, "-config", cfg, "-out", out, "-resume", "-set", "train.epochs=1", "-set", "train.seed=3")
}
