package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/internal/gate"
	"github.com/vitgo/vit/internal/synthimg"
	"github.com/vitgo/vit/layers"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// untrainedCheckpoint writes a fresh MNIST-shaped model with head.bias[0]
// set to bias0, by editing the file.
func untrainedCheckpoint(t *testing.T, dir string, embed int, bias0 float32) string {
	t.Helper()
	cfg := layers.DefaultConfig()
	cfg.ImgSize, cfg.PatchSize, cfg.InChans = layers.Size2{28, 28}, 4, 1
	cfg.EmbedDim, cfg.Depth, cfg.NumHeads, cfg.MLPRatio, cfg.NumClasses = embed, 2, 2, 2, 10
	m, err := layers.New(cfg, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.safetensors")
	if err := checkpoint.SaveModel(path, m, checkpoint.ModelMeta{Dataset: "mnist", Weights: "raw"}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, ts := range f.Tensors {
		if ts.Name == "head.bias" {
			b, _ := ts.Float32()
			b[0] = bias0
			f.Tensors[i] = safetensors.FromFloat32(ts.Name, ts.Shape, b)
		}
	}
	if err := safetensors.Write(path, f.Tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEvalNonFiniteLogits: a model with a NaN head bias scores 0 %, not
// 100 %, with a warning on stderr and "non_finite" in -results.
func TestEvalNonFiniteLogits(t *testing.T) {
	dir := t.TempDir()
	ckpt := untrainedCheckpoint(t, dir, 16, float32(math.NaN()))
	res := filepath.Join(dir, "r.json")
	var o, e bytes.Buffer
	if code := run([]string{"-checkpoint", ckpt, "-set", "data.limit_val=50", "-results", res}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	if !strings.Contains(e.String(), "50 of 50 images had non-finite logits") || !strings.Contains(o.String(), "top1 0.0000") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", o.String(), e.String())
	}
	b, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r["non_finite"] != 50.0 || r["top1"] != 0.0 {
		t.Fatalf("results: non_finite %v top1 %v", r["non_finite"], r["top1"])
	}
}

// gatedFolder writes a folder data set of ten classes with one small PNG in
// each split and class, and in val/c0 a gate sorted before the image: the
// first image of the first evaluation batch. It returns the root, the gate
// and the image bytes to pass through it.
func gatedFolder(t *testing.T) (string, *gate.Gate, []byte) {
	t.Helper()
	root := t.TempDir()
	pix, err := synthimg.WriteSmallFolder(root, 10, 1, 1, 28)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(filepath.Join(root, "val", "c0", "0gate.png"))
	if err != nil {
		t.Fatal(err)
	}
	return root, g, pix
}

// TestEvalSIGINT: SIGINT during an evaluation with -predictions stops it
// with status 130 and leaves neither a predictions file nor its temporary
// file (no .tmp-pred-* left behind); so does a second SIGINT, which exits
// at once. The evaluation's first batch waits at a gate (internal/gate), so
// the signals land while that batch is in progress whatever the machine's
// load: each is sent once the child has reached the state it is meant for,
// and the batch ends (one signal) or never does (two) when the test says so.
func TestEvalSIGINT(t *testing.T) {
	if os.Getenv("VIT_EVAL_MAIN") != "" {
		gate.Install() // a test's gates hold this child at their files
		os.Exit(run(strings.Fields(os.Getenv("VIT_EVAL_MAIN")), os.Stdout, os.Stderr))
	}
	if testing.Short() {
		t.Skip("spawns an evaluation process")
	}
	dir := t.TempDir()
	ckpt := untrainedCheckpoint(t, dir, 16, 0)
	pred := filepath.Join(dir, "p.csv")
	for _, signals := range []int{1, 2} {
		root, g, pix := gatedFolder(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestEvalSIGINT$")
		cmd.Env = append(os.Environ(), "VIT_EVAL_MAIN=-checkpoint "+ckpt+" -set data.name=folder -set data.root="+root+
			" -set train.eval_batch_size=4 -predictions "+pred+" -results "+filepath.Join(dir, "r.json"))
		c := startChild(t, cmd)
		// The whole test's bound, only so that a broken child cannot hang it.
		ctx, cancel := context.WithTimeout(c.ctx, 5*time.Minute)
		defer cancel()
		held, err := g.Wait(ctx) // data.Open checks each image's header
		if err != nil {
			t.Fatalf("%v:\n%s", err, c.stderr())
		}
		if err := held.Pass(pix); err != nil {
			t.Fatal(err)
		}
		if held, err = g.Wait(ctx); err != nil { // the first batch reads the image
			t.Fatalf("%v:\n%s", err, c.stderr())
		}
		if m, _ := filepath.Glob(filepath.Join(dir, ".p.csv.tmp-*")); len(m) != 1 {
			t.Fatalf("during the first batch: temporary predictions files %v, want one", m)
		}
		cmd.Process.Signal(syscall.SIGINT)
		c.waitFor(t, ctx, "again to exit at once") // the first is handled
		if signals == 1 {
			if err := held.Pass(pix); err != nil { // the batch ends; the evaluation stops before the next
				t.Fatal(err)
			}
		} else {
			cmd.Process.Signal(syscall.SIGINT) // the first batch still waits for its image
		}
		err = c.wait()
		held.Pass(pix) // after two signals: releases the test's end of the pipe
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("%d SIGINT: %v, want status 130:\n%s", signals, err, c.stderr())
		}
		want := "evaluation interrupted"
		if signals == 2 {
			want = "exiting at once"
		}
		if !strings.Contains(c.stderr(), want) || strings.Contains(c.stderr(), "goroutine ") {
			t.Fatalf("%d SIGINT: stderr lacks %q:\n%s", signals, want, c.stderr())
		}
		t.Logf("%d SIGINT:\n%s", signals, c.stderr())
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("%d SIGINT left %v, want only the checkpoint", signals, names)
		}
	}
}

// child is a process started from this test binary whose stderr is
// collected line by line.
type child struct {
	cmd    *exec.Cmd
	ctx    context.Context // done once the process has exited
	err    syncBuffer
	lines  chan string
	waited error
}

func startChild(t *testing.T, cmd *exec.Cmd) *child {
	t.Helper()
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	ctx, exited := context.WithCancel(context.Background())
	c := &child{cmd: cmd, ctx: ctx, lines: make(chan string, 1000)}
	go func() {
		r := bufio.NewReader(pr)
		for {
			line, err := r.ReadString('\n')
			c.err.Write([]byte(line))
			select {
			case c.lines <- line:
			default:
			}
			if err != nil {
				break
			}
		}
		close(c.lines)
		c.waited = cmd.Wait() // after stderr is read to its end
		exited()
	}()
	return c
}

func (c *child) stderr() string { return c.err.String() }

// waitFor returns once a stderr line contains s.
func (c *child) waitFor(t *testing.T, ctx context.Context, s string) {
	t.Helper()
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("the child ended before printing %q:\n%s", s, c.stderr())
			}
			if strings.Contains(line, s) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no %q: %v:\n%s", s, ctx.Err(), c.stderr())
		}
	}
}

// wait returns the process's exit error once it has ended.
func (c *child) wait() error {
	<-c.ctx.Done()
	return c.waited
}
