package main

import (
	"bytes"
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

// TestEvalSIGINT: SIGINT during an evaluation with -predictions stops it
// with status 130 and leaves neither a predictions file nor its temporary
// file (no .tmp-pred-* left behind); so does a second SIGINT, which exits
// at once.
func TestEvalSIGINT(t *testing.T) {
	if os.Getenv("VIT_EVAL_MAIN") != "" {
		os.Exit(run(strings.Fields(os.Getenv("VIT_EVAL_MAIN")), os.Stdout, os.Stderr))
	}
	if testing.Short() {
		t.Skip("spawns an evaluation process")
	}
	dir := t.TempDir()
	ckpt := untrainedCheckpoint(t, dir, 64, 0)
	pred := filepath.Join(dir, "p.csv")
	for _, signals := range []int{1, 2} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEvalSIGINT$")
		// Small batches for one signal (it must land before the end); a big
		// one for two (the second must land while the first batch runs).
		batch := map[int]string{1: "4", 2: "2000"}[signals]
		cmd.Env = append(os.Environ(), "VIT_EVAL_MAIN=-checkpoint "+ckpt+" -set train.eval_batch_size="+batch+" -predictions "+pred+" -results "+filepath.Join(dir, "r.json"))
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The predictions' temporary file appears just before the first batch.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if m, _ := filepath.Glob(filepath.Join(dir, ".p.csv.tmp-*")); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no temporary predictions file appeared: %s", stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGINT)
		if signals == 2 {
			// Once the first is handled (a signal sent before may merge
			// with it), while the first 2,000-image batch still runs.
			for end := time.Now().Add(time.Minute); !strings.Contains(stderr.String(), "again to exit at once"); {
				if time.Now().After(end) {
					cmd.Process.Kill()
					t.Fatalf("the first SIGINT was not acknowledged:\n%s", stderr.String())
				}
				time.Sleep(time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGINT)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("%d SIGINT: %v, want status 130:\n%s", signals, err, stderr.String())
		}
		want := "evaluation interrupted"
		if signals == 2 {
			want = "exiting at once"
		}
		if !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "goroutine ") {
			t.Fatalf("%d SIGINT: stderr lacks %q:\n%s", signals, want, stderr.String())
		}
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
