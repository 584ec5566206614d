package train

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/report"
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
	header, rows, err := report.ReadMetrics(filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(header[:10], ",") != "epoch,step,lr,train_loss,val_loss,val_top1,val_top5,grad_norm,img_per_s,elapsed_s" || len(rows) != 2 {
		t.Fatalf("metrics header %v, %d rows", header, len(rows))
	}
	if res.OutDir != out {
		t.Errorf("Result.OutDir %q, want %q", res.OutDir, out)
	}
	if res.Steps != 16 || res.Last.Images != 100 {
		t.Fatalf("steps %d images %d, want 16 and 100 (remainder batch included)", res.Steps, res.Last.Images)
	}
	// cmd/eval on the last checkpoint reproduces the run's own validation.
	r, _, _, err := evalToFiles(context.Background(), evaluate.Options{Checkpoint: filepath.Join(out, LastModel), Loader: evalLoader(cfg)},
		report.EvalFiles{Results: filepath.Join(out, "r.json"), Predictions: filepath.Join(out, "p.csv"), Confusion: filepath.Join(out, "c.png")})
	if err != nil {
		t.Fatal(err)
	}
	if r.Top1 != res.Last.Top1 || r.Top5 != res.Last.Top5 || math.Abs(r.Loss-res.Last.Loss) > 1e-12 {
		t.Fatalf("eval %v/%v/%v, training validation %v/%v/%v", r.Top1, r.Top5, r.Loss, res.Last.Top1, res.Last.Top5, res.Last.Loss)
	}
	re, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{Checkpoint: filepath.Join(out, LastModel), Loader: evalLoader(cfg), EMA: true})
	if err != nil {
		t.Fatal(err)
	}
	if re.Top1 != res.LastEMA.Top1 || math.Abs(re.Loss-res.LastEMA.Loss) > 1e-12 {
		t.Fatalf("eval -ema %v/%v, training EMA validation %v/%v", re.Top1, re.Loss, res.LastEMA.Top1, res.LastEMA.Loss)
	}
	// eval -ema -img-size (twice the side) resamples the EMA's pos_embed as
	// the plain weights' is: the EMA model file's numbers at that size.
	twice := cfg.Model.ImgSize
	twice[0], twice[1] = 2*twice[0], 2*twice[1]
	rb, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{Checkpoint: filepath.Join(out, LastModel), Loader: evalLoader(cfg), EMA: true, ImgSize: &twice})
	if err != nil {
		t.Fatalf("eval -ema -img-size %v: %v", twice, err)
	}
	wb, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{Checkpoint: filepath.Join(out, LastEMAModel), Loader: evalLoader(cfg), ImgSize: &twice})
	if err != nil {
		t.Fatal(err)
	}
	if rb.Top1 != wb.Top1 || rb.Loss != wb.Loss {
		t.Errorf("eval -ema -img-size %v: %v/%v, the EMA model file at that size %v/%v", twice, rb.Top1, rb.Loss, wb.Top1, wb.Loss)
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

// TestBF16EvalMatches: a run trained and validated in bf16, evaluated by
// cmd/eval's evaluator in bf16 (a Frozen graph), gives the run's own
// validation numbers.
func TestBF16EvalMatches(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Train.Precision = graph.BF16
	res, err := Run(context.Background(), cfg, Options{Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	r, _, _, err := evaluate.Checkpoint(context.Background(), evaluate.Options{Checkpoint: filepath.Join(cfg.Train.OutDir, LastModel), Loader: evalLoader(cfg), Precision: graph.BF16})
	if err != nil {
		t.Fatal(err)
	}
	if r.Top1 != res.Last.Top1 || r.Top5 != res.Last.Top5 || math.Abs(r.Loss-res.Last.Loss) > 1e-12 {
		t.Fatalf("bf16 eval %v/%v/%v, training validation %v/%v/%v", r.Top1, r.Top5, r.Loss, res.Last.Top1, res.Last.Top5, res.Last.Loss)
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

// sameRun requires a resumed run in dir to have ended exactly where the
// uninterrupted run in ref did: weights, EMA weights and AdamW moments bit
// for bit, and steps.csv and metrics.csv equal but for their timings
// (img_per_s, elapsed_s).
func sameRun(t *testing.T, ref, dir string) {
	t.Helper()
	sameWeights(t, finalWeights(t, ref), finalWeights(t, dir))
	a, err := LoadState(filepath.Join(ref, LastState))
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadState(filepath.Join(dir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	if a.OptStep != b.OptStep || a.Step != b.Step {
		t.Fatalf("optimizer step %d vs %d, step %d vs %d", a.OptStep, b.OptStep, a.Step, b.Step)
	}
	if (a.EMA == nil) != (b.EMA == nil) {
		t.Fatalf("EMA in one state file only")
	}
	for what, m := range map[string][2]map[string][]float32{"EMA": {a.EMA, b.EMA}, "AdamW m": {a.M, b.M}, "AdamW v": {a.V, b.V}} {
		t.Run(what, func(t *testing.T) { sameWeights(t, m[0], m[1]) })
	}
	sa, err := report.ReadSteps(filepath.Join(ref, report.StepsFile))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := report.ReadSteps(filepath.Join(dir, report.StepsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(sa) == 0 || len(sa) != len(sb) {
		t.Fatalf("steps.csv: %d rows vs %d", len(sa), len(sb))
	}
	for i := range sa {
		sa[i].ImgPerS, sb[i].ImgPerS = 0, 0
		if sa[i] != sb[i] {
			t.Fatalf("steps.csv row %d: %+v vs %+v", i, sa[i], sb[i])
		}
	}
	_, ma, err := report.ReadMetrics(filepath.Join(ref, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	_, mb, err := report.ReadMetrics(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(ma) != len(mb) {
		t.Fatalf("metrics.csv: %d rows vs %d", len(ma), len(mb))
	}
	for i := range ma {
		for j, h := range report.MetricsHeader {
			if h != "img_per_s" && h != "elapsed_s" && ma[i][j] != mb[i][j] {
				t.Errorf("metrics.csv row %d %s: %s vs %s", i, h, ma[i][j], mb[i][j])
			}
		}
	}
}

// TestResumeAfterSIGKILL kills a training process with SIGKILL mid-epoch
// (asserted: the process died of the signal, its last checkpoint inside the
// second epoch), resumes it with Resume, and requires the run to end as an
// uninterrupted one does ([sameRun]). Mixup/CutMix, drop path, dropout,
// augmentation and EMA are all on, so every random stream must be restored.
// The child stops after step 41 and says so on stdout: its last checkpoint
// is step 39's (every 3 steps, epochs of 32) and steps.csv holds a row
// beyond it (step 40's), which the resumed run must drop.
func TestResumeAfterSIGKILL(t *testing.T) {
	if os.Getenv("VIT_TRAIN_CHILD") != "" {
		cfg := sigkillRun(t)
		cfg.Train.OutDir = os.Getenv("VIT_TRAIN_CHILD")
		stopAt := func(r *run, _ *data.Batch, _ StepStats) {
			if r.st.Step == sigkillStep {
				fmt.Println(sigkillLine)
				for { // until killed
					time.Sleep(time.Hour)
				}
			}
		}
		_, err := Run(context.Background(), cfg, Options{Log: quietLog(), onStep: stopAt})
		t.Fatalf("the run ended (%v) instead of stopping at step %d", err, sigkillStep)
	}
	if testing.Short() {
		t.Skip("spawns a training process")
	}
	ref := sigkillRun(t)
	if _, err := Run(context.Background(), ref, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeAfterSIGKILL$")
	cmd.Env = append(os.Environ(), "VIT_TRAIN_CHILD="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	stopped := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == sigkillLine {
				stopped <- true
				io.Copy(io.Discard, stdout)
				return
			}
		}
		stopped <- false
	}()
	select {
	case ok := <-stopped:
		if !ok {
			t.Fatalf("the child ended before step %d: %v", sigkillStep, cmd.Wait())
		}
	case <-time.After(5 * time.Minute): // a bound only
		t.Fatalf("the child did not reach step %d", sigkillStep)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want death by SIGKILL", err)
	}
	st, err := LoadState(filepath.Join(dir, LastState))
	if err != nil {
		t.Fatal(err)
	}
	if st.Step != 39 || st.Epoch != 1 || st.EpochStep != 7 {
		t.Fatalf("killed with a checkpoint at step %d (epoch %d step %d), want step 39 (epoch 1 step 7)", st.Step, st.Epoch, st.EpochStep)
	}
	t.Logf("killed; resuming from epoch %d step %d", st.Epoch, st.EpochStep)
	cfg := sigkillRun(t)
	cfg.Train.OutDir = dir
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameRun(t, ref.Train.OutDir, dir)
}

// The child of TestResumeAfterSIGKILL stops after step sigkillStep and
// prints sigkillLine.
const (
	sigkillStep = 41
	sigkillLine = "stopped at step 41"
)

// sigkillRun is tinyRun with batches of 8 (32 steps per epoch), a
// checkpoint every 3 steps, EMA on and a steps.csv row every 2 steps.
func sigkillRun(t *testing.T) Config {
	cfg := tinyRun(t)
	cfg.Train.BatchSize, cfg.Train.LogEvery = 8, 2
	cfg.Checkpoint.EverySteps = 3
	cfg.Optim.EMA = true
	return cfg
}

// TestInterruptWritesCheckpointAndResumes: a cancelled context stops the run
// after its first step with ErrInterrupted and a checkpoint; the resumed run
// ends as an uninterrupted one does ([sameRun]: weights, EMA, AdamW moments,
// steps.csv, and metrics.csv, whose first row needs the epoch's running sums
// from before the interrupt).
func TestInterruptWritesCheckpointAndResumes(t *testing.T) {
	newCfg := func() Config {
		cfg := tinyRun(t)
		cfg.Optim.EMA, cfg.Train.LogEvery = true, 1
		return cfg
	}
	ref := newCfg()
	if _, err := Run(context.Background(), ref, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	cfg := newCfg()
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
	sameRun(t, ref.Train.OutDir, cfg.Train.OutDir)
}

func TestNaNStopsAndKeepsLastGoodCheckpoint(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Optim.LR = 1e30
	cfg.Optim.WarmupEpochs.Set(0)
	cfg.Optim.ClipGrad.Set(0)
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
// own weights, says so in its log line, and still ends bit for bit where an
// uninterrupted run does.
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
	var logged bytes.Buffer
	log := quietLog()
	log.SetOutput(&logged)
	if _, err := Run(context.Background(), cfg, Options{Log: log, Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameWeights(t, finalWeights(t, ref.Train.OutDir), finalWeights(t, cfg.Train.OutDir))
	if !strings.Contains(logged.String(), "resumed from "+statePath) {
		t.Errorf("the resume log does not name %s, where the weights come from:\n%s", statePath, logged.String())
	}
}

// TestStepsCSV: steps.csv gets a row every train.log_every steps at Info
// level (no -v), numbered as metrics.csv (steps done, 1-based epochs), with
// the lr of the schedule and the loss Step reported.
func TestStepsCSV(t *testing.T) {
	cfg := tinyRun(t)
	cfg.Train.LogEvery = 3
	log := quietLog()
	log.SetLevel(logrus.InfoLevel)
	if _, err := Run(context.Background(), cfg, Options{Log: log}); err != nil {
		t.Fatal(err)
	}
	rows, err := report.ReadSteps(filepath.Join(cfg.Train.OutDir, report.StepsFile))
	if err != nil {
		t.Fatal(err)
	}
	sched := cfg.Optim.Schedule()
	var steps []int
	for _, r := range rows {
		steps = append(steps, r.Step)
		if want := (r.Step-1)/8 + 1; r.Epoch != want {
			t.Errorf("step %d: epoch %d, want %d", r.Step, r.Epoch, want)
		}
		if want := sched.LR(r.Step-1, 8, 16); r.LR != want {
			t.Errorf("step %d: lr %v, want the schedule's %v", r.Step, r.LR, want)
		}
		if !(r.Loss > 0) || !(r.GradNorm > 0) || !(r.ImgPerS > 0) {
			t.Errorf("step %d: %+v", r.Step, r)
		}
	}
	if !slices.Equal(steps, []int{3, 6, 9, 12, 15}) {
		t.Fatalf("rows at steps %v, want every 3rd of 16", steps)
	}
}
