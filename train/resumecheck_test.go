package train

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/report"
)

// snapshot reads the files of a run directory that -resume must not touch
// when it refuses.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range []string{ConfigFile, MetricsFile, LastModel, LastState} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

func sameSnapshot(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	for n := range a {
		if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s changed %s", what, n)
		}
	}
}

func metricsSteps(t *testing.T, dir string) string {
	t.Helper()
	_, rows, err := report.ReadMetrics(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, r := range rows {
		s = append(s, r[1])
	}
	return strings.Join(s, ",")
}

// TestResumeRefusesChangedMath: -resume with a config that changes what the
// run computes is refused, listing every such key, and nothing is written;
// the keys that cannot change it are allowed and logged, and config.yaml
// then agrees with the state file.
func TestResumeRefusesChangedMath(t *testing.T) {
	cfg := quickRun(t)
	cfg.Train.Epochs, cfg.Train.MaxSteps = 2, 1
	out := cfg.Train.OutDir
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)
	bad := cfg
	bad.Train.Seed = 7
	bad.Train.BatchSize = 16
	bad.Model.NumHeads = 4
	bad.Model.Readout = layers.ReadoutMean
	bad.Data.Name = "fashion_mnist"
	bad.Train.MaxSteps = 0 // allowed, so not listed
	_, err := Run(context.Background(), bad, Options{Log: quietLog(), Resume: true})
	var rce *ResumeConfigError
	if !errors.As(err, &rce) {
		t.Fatalf("resume with changed math: %v, want *ResumeConfigError", err)
	}
	var keys []string
	for _, c := range rce.Changes {
		keys = append(keys, c.Key)
	}
	if got, want := strings.Join(keys, " "), "data.name model.num_heads model.readout train.batch_size train.seed"; got != want {
		t.Fatalf("refused keys %q, want %q\n%v", got, want, err)
	}
	if !strings.Contains(err.Error(), "train.seed: 0 → 7") || !strings.Contains(err.Error(), LastState) {
		t.Errorf("message lacks the values or the state file: %v", err)
	}
	sameSnapshot(t, "a refused resume", before, snapshot(t, out))

	short := cfg
	short.Train.Epochs, short.Train.MaxSteps = 1, 0
	if _, err := Run(context.Background(), short, Options{Log: quietLog(), Resume: true}); !errors.As(err, &rce) ||
		len(rce.Changes) != 1 || rce.Changes[0].Key != "train.epochs" {
		t.Fatalf("resume with fewer epochs: %v", err)
	}

	// The allowed keys: the run continues, each change is logged, and
	// config.yaml is the state file's config.
	ok := cfg
	ok.Train.Epochs, ok.Train.MaxSteps, ok.Train.LogEvery, ok.Train.Threads, ok.Train.EvalEvery = 3, 0, 7, 1, 2
	ok.Data.Workers, ok.Data.Prefetch, ok.Checkpoint.KeepLast, ok.Checkpoint.EverySteps = 1, 2, 1, 5
	var logs bytes.Buffer
	log := logrus.New()
	log.SetOutput(&logs)
	if _, err := Run(context.Background(), ok, Options{Log: log, Resume: true}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"train.epochs", "train.max_steps", "train.log_every", "train.threads", "train.eval_every",
		"data.workers", "data.prefetch", "checkpoint.keep_last", "checkpoint.every_steps"} {
		if !strings.Contains(logs.String(), "resume: "+k+" changed from") {
			t.Errorf("the change of %s was not logged", k)
		}
	}
	md, err := safetensors.ReadMetadata(filepath.Join(out, LastState))
	if err != nil {
		t.Fatal(err)
	}
	yml, err := os.ReadFile(filepath.Join(out, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if md["config"] != string(yml) || !strings.Contains(string(yml), "epochs: 3") {
		t.Fatalf("config.yaml and the state file's config differ:\n%s\n---\n%s", yml, md["config"])
	}
}

// TestResumeOfFinishedRun: -resume of a complete run says so and writes
// nothing (no duplicate metrics row with zero train_loss);
// it continues only when epochs or max_steps grew.
func TestResumeOfFinishedRun(t *testing.T) {
	cfg := quickRun(t)
	cfg.Train.Epochs, cfg.Train.MaxSteps = 2, 1
	out := cfg.Train.OutDir
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog()}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); !errors.Is(err, ErrRunComplete) {
		t.Fatalf("resume of a run stopped by max_steps: %v, want ErrRunComplete", err)
	}
	sameSnapshot(t, "resuming a complete run", before, snapshot(t, out))

	cfg.Train.MaxSteps = 0 // on to the end of epoch 2
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatal(err)
	}
	if got := metricsSteps(t, out); got != "1,2,4" {
		t.Fatalf("metrics rows at steps %s, want 1,2,4", got)
	}
	before = snapshot(t, out)
	_, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true})
	if !errors.Is(err, ErrRunComplete) || !strings.Contains(err.Error(), "2 of 2 epochs") {
		t.Fatalf("resume of a finished run: %v, want ErrRunComplete naming 2 of 2 epochs", err)
	}
	sameSnapshot(t, "resuming a finished run", before, snapshot(t, out))

	cfg.Train.Epochs = 3
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatal(err)
	}
	if got := metricsSteps(t, out); got != "1,2,4,6" {
		t.Fatalf("after extending to 3 epochs: rows at steps %s, want 1,2,4,6", got)
	}
	// -resume where there is no run.
	cfg.Train.OutDir = t.TempDir()
	var noRun *NoRunError
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); !errors.As(err, &noRun) || noRun.Dir != cfg.Train.OutDir || !strings.Contains(err.Error(), LastState) {
		t.Fatalf("resume of nothing: %v, want a *NoRunError naming %s", err, LastState)
	}
}
