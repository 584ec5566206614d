package main

import (
	"bufio"
	"bytes"
	"context"
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

	"github.com/vitgo/vit/internal/gate"
	"github.com/vitgo/vit/internal/synthimg"
)

// child is a training process started from this test binary (see
// TestSIGINTWritesCheckpoint) whose stderr is collected and watched.
type child struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	err  bytes.Buffer
	seen chan string   // stderr lines
	done chan struct{} // closed at the end of stderr: the process has ended
}

func startTrainer(t *testing.T, args ...string) *child {
	t.Helper()
	if testing.Short() {
		t.Skip("spawns a training process")
	}
	c := &child{seen: make(chan string, 1000), done: make(chan struct{})}
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
				close(c.done)
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

// hold returns once the trainer has opened g to read it: the trainer is
// then blocked in that read until the test passes it an image.
func (c *child) hold(t *testing.T, g *gate.Gate) *gate.Held {
	t.Helper()
	// Minutes, only so that a broken child cannot hang the test.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-c.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	h, err := g.Wait(ctx)
	if err != nil {
		t.Fatalf("%v:\n%s", err, c.stderr())
	}
	return h
}

// gatedFolder writes a folder data set of two classes, eight 28×28 training
// images and one validation image each, and a gate sorted first in
// split/c0; it returns the data section of a config reading it, the gate
// and the image to pass through it.
func gatedFolder(t *testing.T, split string) (string, *gate.Gate, []byte) {
	t.Helper()
	root := t.TempDir()
	pix, err := synthimg.WriteSmallFolder(root, 2, 8, 1, 28)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(filepath.Join(root, split, "c0", "0gate.png"))
	if err != nil {
		t.Fatal(err)
	}
	return "data: {name: folder, root: " + root + "}\n", g, pix
}

// serve passes pix to each open of g until the test ends.
func serve(t *testing.T, g *gate.Gate, pix []byte) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Serve(ctx, pix)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// wait returns the exit status once the process has ended and its stderr
// has been read to the end (Wait closes the pipe: it comes after).
func (c *child) wait(t *testing.T) int {
	t.Helper()
	for range c.seen {
	}
	<-c.done
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return c.cmd.ProcessState.ExitCode()
}

func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	p := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// model is small: the tests hold the trainer at a read with a gate, not with
// the time a step takes.
const model = "model: {img_size: 28, patch_size: 7, in_chans: 1, embed_dim: 16, depth: 1, num_heads: 2, mlp_ratio: 2, num_classes: 2}\n"

// TestSIGINTDuringFinalEvaluation: a signal during the final evaluation
// stops it (rather than running to the end and exiting 0) with the status
// and message of an interrupted run, and -resume then completes the run. The
// evaluation's first batch waits at a gate, so the signal lands inside the
// evaluation.
func TestSIGINTDuringFinalEvaluation(t *testing.T) {
	dir := t.TempDir()
	folder, g, pix := gatedFolder(t, "val")
	cfg := writeConfig(t, dir, model+folder+`
train: {epochs: 1, max_steps: 1, batch_size: 16, eval_batch_size: 1}
`)
	out := filepath.Join(dir, "out")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		os.RemoveAll(out)
		c := startTrainer(t, "-config", cfg, "-out", out)
		c.hold(t, g).Pass(pix) // data.Open checks each image's header
		held := c.hold(t, g)   // step 1 is done: the final evaluation reads its first batch
		c.cmd.Process.Signal(sig)
		c.waitFor(t, "again to exit at once")
		held.Pass(pix) // the batch ends; the evaluation stops before the next
		code := c.wait(t)
		if code != 128+int(sig) || !strings.Contains(c.stderr(), "evaluation interrupted") || !strings.Contains(c.stderr(), "-resume") {
			t.Fatalf("%v during the final evaluation: exit %d, want %d and an interrupted-run message:\n%s", sig, code, 128+int(sig), c.stderr())
		}
		if strings.Contains(c.stderr(), "goroutine ") {
			t.Fatalf("stack trace:\n%s", c.stderr())
		}
	}
	serve(t, g, pix)
	var o, e bytes.Buffer
	if code := run([]string{"-config", cfg, "-out", out, "-resume", "-set", "data.limit_val=1"}, &o, &e); code == 0 ||
		!strings.Contains(e.String(), "data.limit_val") {
		t.Fatalf("resume with another limit_val: exit %d, want a refusal naming data.limit_val:\n%s", code, e.String())
	}
	if code := run([]string{"-config", cfg, "-out", out, "-resume"}, &o, &e); code != 0 {
		t.Fatalf("resume: exit %d:\n%s", code, e.String())
	}
}

// TestSecondSIGINTExitsAtOnce: after the first SIGINT, which lets the step
// finish, a second one exits at once with status 130. Every batch holds a
// gate, so the first step is still waiting for its images when both land.
func TestSecondSIGINTExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	folder, g, pix := gatedFolder(t, "train")
	cfg := writeConfig(t, dir, model+folder+`
train: {epochs: 100, batch_size: 17}
`)
	c := startTrainer(t, "-config", cfg, "-out", filepath.Join(dir, "out"))
	c.hold(t, g).Pass(pix) // data.Open checks each image's header
	held := c.hold(t, g)   // a batch of the first epoch
	c.cmd.Process.Signal(syscall.SIGINT)
	c.waitFor(t, "again to exit at once") // the first is handled (a signal sent before may merge with it)
	c.cmd.Process.Signal(syscall.SIGINT)
	code := c.wait(t)
	held.Pass(pix) // releases the test's end of the pipe
	if code != 130 || !strings.Contains(c.stderr(), "exiting at once") || strings.Contains(c.stderr(), "training interrupted at step") {
		t.Fatalf("two SIGINTs: exit %d, want 130 at once without finishing the step:\n%s", code, c.stderr())
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "out", ".*.tmp-*")); len(names) != 0 {
		t.Fatalf("temporary files left: %v", names)
	}
}

// TestOutDirRefusals runs three misuses through the command: a second
// trainer on a busy directory, a fresh run into a used one, and -resume of a
// finished run. Each ends with a clear message (no stack trace). The first
// trainer is held in its first step by a gate in every batch.
func TestOutDirRefusals(t *testing.T) {
	dir := t.TempDir()
	folder, g, pix := gatedFolder(t, "train")
	cfg := writeConfig(t, dir, model+folder+`
train: {epochs: 1000, batch_size: 17}
`)
	out := filepath.Join(dir, "out")
	c := startTrainer(t, "-config", cfg, "-out", out)
	c.hold(t, g).Pass(pix) // data.Open checks each image's header
	held := c.hold(t, g)   // a batch of the first epoch: the lock is taken
	if b, _ := os.ReadFile(filepath.Join(out, ".train.lock")); strings.TrimSpace(string(b)) != strconv.Itoa(c.cmd.Process.Pid) {
		t.Fatalf("the first trainer holds no lock (%q):\n%s", b, c.stderr())
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
	c.waitFor(t, "again to exit at once")
	held.Pass(pix)
	serve(t, g, pix) // the first trainer's step, and the runs below
	if code := c.wait(t); code != 130 {
		t.Fatalf("first trainer: exit %d:\n%s", code, c.stderr())
	}
	check("fresh run into a used directory", 1, []string{"-overwrite", "last.safetensors"}, "-config", cfg, "-out", out)
	check("-overwrite", 0, nil, "-config", cfg, "-out", out, "-overwrite", "-set", "train.epochs=1")
	check("resume of a finished run", 0, []string{"complete"}, "-config", cfg, "-out", out, "-resume", "-set", "train.epochs=1")
	check("resume with another seed", 1, []string{"train.seed: 0 → 3"}, "-config", cfg, "-out", out, "-resume", "-set", "train.epochs=1", "-set", "train.seed=3")
}

// TestResumeFIFOExitsAtOnce: -resume of a distilled run whose teacher,
// steps.csv or metrics.csv is now a named pipe exits 1 at once with an
// error naming the file as a named pipe, instead of blocking in its open
// ("stopping after the current step" and no end); with the file back, the
// run resumes.
func TestResumeFIFOExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	if _, err := synthimg.WriteSmallFolder(root, 2, 8, 1, 28); err != nil {
		t.Fatal(err)
	}
	data := "data: {name: folder, root: " + root + "}\ntrain: {epochs: 1, batch_size: 8}\n"
	teacherOut := filepath.Join(dir, "teacher")
	var o, e bytes.Buffer
	if code := run([]string{"-config", writeConfig(t, dir, model+data), "-out", teacherOut}, &o, &e); code != 0 {
		t.Fatalf("teacher run: exit %d:\n%s", code, e.String())
	}
	teacher := filepath.Join(teacherOut, "last.safetensors")
	student := strings.Replace(model, "num_classes: 2}", "num_classes: 2, distilled: true}", 1) +
		"distill: {type: hard, teacher: " + teacher + "}\n"
	cfg := writeConfig(t, dir, student+data)
	out := filepath.Join(dir, "out")
	e.Reset()
	if code := run([]string{"-config", cfg, "-out", out}, &o, &e); code != 0 {
		t.Fatalf("distilled run: exit %d:\n%s", code, e.String())
	}
	for _, p := range []string{teacher, filepath.Join(out, "steps.csv"), filepath.Join(out, "metrics.csv")} {
		keep, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		o.Reset()
		e.Reset()
		code := run([]string{"-config", cfg, "-out", out, "-resume", "-set", "train.epochs=2"}, &o, &e)
		if code != 1 || !strings.Contains(e.String(), p) || !strings.Contains(e.String(), "named pipe") {
			t.Errorf("-resume with %s a FIFO: exit %d, want 1 and an error naming it as a named pipe:\n%s", p, code, e.String())
		}
		os.Remove(p)
		if err := os.WriteFile(p, keep, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.Reset()
	if code := run([]string{"-config", cfg, "-out", out, "-resume", "-set", "train.epochs=2"}, &o, &e); code != 0 {
		t.Fatalf("-resume with the files back: exit %d:\n%s", code, e.String())
	}
}
