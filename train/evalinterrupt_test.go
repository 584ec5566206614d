package train

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/checkpoint"
	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/evaluate"
	"github.com/vitgo/vit/report"
)

// cancelOnNewline cancels a context when the progress bar ends its line,
// which Run does right before the end-of-epoch evaluation.
type cancelOnNewline struct{ cancel context.CancelFunc }

func (c cancelOnNewline) Write(p []byte) (int, error) {
	if string(p) == "\n" {
		c.cancel()
	}
	return len(p), nil
}

// TestEvalInterrupt: a signal (a cancelled context) during an evaluation
// stops it before the next batch. In Run, an interrupted final evaluation
// ends like an interrupted run (ErrInterrupted, checkpoint written), records
// no metrics row, and -resume evaluates and records that epoch exactly once.
func TestEvalInterrupt(t *testing.T) {
	cfg := quickRun(t)
	// The evaluator alone.
	model, _, _, err := checkpoint.LoadModel(poisonedCheckpoint(t, cfg, 0), tensor.Float32, nil, "bicubic")
	if err != nil {
		t.Fatal(err)
	}
	valSet, err := data.Open(cfg.Data, data.Val, cfg.Model.InChans)
	if err != nil {
		t.Fatal(err)
	}
	mean, std := valSet.Norm()
	loader, err := data.NewLoader(valSet, loaderConfig(cfg, false, mean, std))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := evaluate.New(model, cfg.EvalBatch())
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ev.Run(ctx, loader, nil); !errors.Is(err, evaluate.ErrInterrupted) {
		t.Fatalf("evaluation with a cancelled context: %v, want evaluate.ErrInterrupted", err)
	}

	// The run's final evaluation.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	out := cfg.Train.OutDir
	_, err = Run(ctx, cfg, Options{Log: quietLog(), Progress: report.NewProgressWriter(cancelOnNewline{cancel})})
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, evaluate.ErrInterrupted) {
		t.Fatalf("signal during the final evaluation: %v, want ErrInterrupted from the evaluation", err)
	}
	if got := metricsSteps(t, out); got != "" {
		t.Fatalf("an interrupted evaluation recorded rows at steps %q", got)
	}
	md, err := safetensors.ReadMetadata(filepath.Join(out, LastState))
	if err != nil {
		t.Fatal(err)
	}
	if md["step"] != "2" || md["epoch"] != "0" || md["epoch_step"] != "2" {
		t.Fatalf("state step %s epoch %s epoch_step %s, want 2, 0, 2 (trained, not evaluated)", md["step"], md["epoch"], md["epoch_step"])
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); err != nil {
		t.Fatal(err)
	}
	if got := metricsSteps(t, out); got != "2" {
		t.Fatalf("after resume: rows at steps %q, want 2", got)
	}
	if _, err := Run(context.Background(), cfg, Options{Log: quietLog(), Resume: true}); !errors.Is(err, ErrRunComplete) {
		t.Fatalf("second resume: %v, want ErrRunComplete", err)
	}
}
