package train

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vitgo/vit/train/safetensors"
)

func TestRunWritesOutputsAndEvalMatches(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Optim.EMA = true
	res, err := Run(context.Background(), cfg, Options{Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	out := cfg.Train.OutDir
	for _, f := range []string{ConfigFile, MetricsFile, LastModel, LastState, LastEMAModel, BestModel, CurvesFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing output: %v", err)
		}
	}
	header, rows, err := ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(header[:10], ",") != "epoch,step,lr,train_loss,val_loss,val_top1,val_top5,grad_norm,img_per_s,elapsed_s" || len(rows) != 2 {
		t.Fatalf("metrics header %v, %d rows", header, len(rows))
	}
	if res.Steps != 16 || res.Last.Images != 100 {
		t.Fatalf("steps %d images %d, want 16 and 100 (remainder batch included)", res.Steps, res.Last.Images)
	}
	// cmd/eval on the last checkpoint reproduces the run's own validation.
	r, _, _, err := EvaluateCheckpoint(EvalOptions{Checkpoint: filepath.Join(out, LastModel), Config: &cfg,
		Results: filepath.Join(out, "r.json"), Predictions: filepath.Join(out, "p.csv"), Confusion: filepath.Join(out, "c.png")})
	if err != nil {
		t.Fatal(err)
	}
	if r.Top1 != res.Last.Top1 || r.Top5 != res.Last.Top5 || math.Abs(r.Loss-res.Last.Loss) > 1e-12 {
		t.Fatalf("eval %v/%v/%v, training validation %v/%v/%v", r.Top1, r.Top5, r.Loss, res.Last.Top1, res.Last.Top5, res.Last.Loss)
	}
	re, _, _, err := EvaluateCheckpoint(EvalOptions{Checkpoint: filepath.Join(out, LastModel), Config: &cfg, EMA: true})
	if err != nil {
		t.Fatal(err)
	}
	if re.Top1 != res.LastEMA.Top1 || math.Abs(re.Loss-res.LastEMA.Loss) > 1e-12 {
		t.Fatalf("eval -ema %v/%v, training EMA validation %v/%v", re.Top1, re.Loss, res.LastEMA.Top1, res.LastEMA.Loss)
	}
	pred, err := os.ReadFile(filepath.Join(out, "p.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(pred)), "\n")
	if len(lines) != 101 || !strings.HasPrefix(lines[0], "index,label,pred,logit_0,") || !strings.HasPrefix(lines[1], "0,") {
		t.Fatalf("predictions: %d lines, first %q %q", len(lines), lines[0], lines[1])
	}
}

// finalWeights reads a run's last model file.
func finalWeights(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	f, err := safetensors.ReadFile(filepath.Join(dir, LastModel))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for _, ts := range f.Tensors {
		v, err := ts.Float32()
		if err != nil {
			t.Fatal(err)
		}
		out[ts.Name] = v
	}
	return out
}

func sameWeights(t *testing.T, a, b map[string][]float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d vs %d tensors", len(a), len(b))
	}
	for n, va := range a {
		vb := b[n]
		for i := range va {
			if math.Float32bits(va[i]) != math.Float32bits(vb[i]) {
				t.Fatalf("%s[%d]: %v vs %v: resumed run is not bitwise equal", n, i, va[i], vb[i])
			}
		}
	}
}

// TestResumeAfterSIGKILL kills a training process with SIGKILL mid-epoch,
// resumes it with Resume, and requires the same final weights, bit for bit,
// as an uninterrupted run. Mixup/CutMix, drop path, dropout, augmentation
// and EMA are all on, so every random stream must be restored.
func TestResumeAfterSIGKILL(t *testing.T) {
	if os.Getenv("VIT_TRAIN_CHILD") != "" {
		cfg := tinyRun(t)
		cfg.Train.OutDir = os.Getenv("VIT_TRAIN_CHILD")
		cfg.Checkpoint.EverySteps = 3
		cfg.Optim.EMA = true
		for i := 0; ; i++ { // run again and again until killed
			if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: i > 0}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if testing.Short() {
		t.Skip("spawns a training process")
	}
	ref := tinyRun(t)
	ref.Checkpoint.EverySteps = 3
	ref.Optim.EMA = true
	if _, err := Run(context.Background(), ref, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeAfterSIGKILL$")
	cmd.Env = append(os.Environ(), "VIT_TRAIN_CHILD="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once a mid-epoch checkpoint of the second epoch exists.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if st, err := LoadState(filepath.Join(dir, LastState)); err == nil && st.Epoch == 1 && st.EpochStep > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no mid-epoch checkpoint appeared")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	st, err := LoadState(filepath.Join(dir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed; resuming from epoch %d step %d", st.Epoch, st.EpochStep)
	cfg := tinyRun(t)
	cfg.Train.OutDir = dir
	cfg.Checkpoint.EverySteps = 3
	cfg.Optim.EMA = true
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameWeights(t, finalWeights(t, ref.Train.OutDir), finalWeights(t, dir))
}

func TestInterruptWritesCheckpointAndResumes(t *testing.T) {
	ref := tinyRun(t)
	if _, err := Run(context.Background(), ref, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	cfg := tinyRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as if SIGINT arrived during the first step
	_, err := Run(ctx, cfg, Options{Log: quietLog()})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "step 1") {
		t.Fatalf("error %v, want ErrInterrupted at step 1", err)
	}
	st, err := LoadState(filepath.Join(cfg.Train.OutDir, LastState))
	if err != nil || st.Step != 1 {
		t.Fatalf("checkpoint after interrupt: step %d, %v", st.Step, err)
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameWeights(t, finalWeights(t, ref.Train.OutDir), finalWeights(t, cfg.Train.OutDir))
}

func TestNaNStopsAndKeepsLastGoodCheckpoint(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Optim.LR, cfg.Optim.WarmupEpochs, cfg.Optim.ClipGrad = 1e30, 0, 0
	cfg.Checkpoint.EverySteps = 1
	_, err := Run(context.Background(), cfg, Options{Log: quietLog()})
	var nf *NonFiniteError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v, want a *NonFiniteError", err)
	}
	w := finalWeights(t, cfg.Train.OutDir) // the last checkpoint is still readable
	if len(w) == 0 {
		t.Fatal("no checkpoint kept")
	}
	t.Logf("stopped: %v", err)
}

func TestResumeErrors(t *testing.T) {
	cfg := tinyRun(t)
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err == nil || !strings.Contains(err.Error(), LastState) {
		t.Fatalf("resume from an empty dir: %v, want an error naming %s, the file a resume reads", err, LastState)
	}
}

// TestResumeWhenModelFileIsAhead: a run that dies after writing
// last.safetensors but before last.train.safetensors leaves the model file
// a step ahead of the state file; resuming continues from the state file's
// own weights and still ends bit for bit where an uninterrupted run does.
func TestResumeWhenModelFileIsAhead(t *testing.T) {
	ref := tinyRun(t)
	if _, err := Run(context.Background(), ref, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	cfg := tinyRun(t)
	statePath := filepath.Join(cfg.Train.OutDir, LastState)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel() // each Run below takes one step, writes its checkpoint and stops
	if _, err := Run(cancelled, cfg, Options{Log: quietLog()}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first step: %v", err)
	}
	step1, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(cancelled, cfg, Options{Log: quietLog(), Resume: true}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("second step: %v", err)
	}
	if err := os.WriteFile(statePath, step1, 0o644); err != nil { // died before the state of step 2 was written
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameWeights(t, finalWeights(t, ref.Train.OutDir), finalWeights(t, cfg.Train.OutDir))
}
