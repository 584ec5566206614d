package main

import (
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"time"

	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/layers"
)

// stepsResult is what a modeSteps child measured.
type stepsResult struct {
	Backend   string  `json:"backend"` // kernels.Backend(), or kernels.BF16Backend() in bf16
	Params    int     `json:"params"`
	TrainImgS float64 `json:"train_img_s"` // steps·batch / time of the timed steps
	EvalImgS  float64 `json:"eval_img_s"`
	StepMs    float64 `json:"step_ms"` // mean training step
	EvalMs    float64 `json:"eval_ms"` // mean eval forward
	LossFirst float64 `json:"loss_first"`
	LossLast  float64 `json:"loss_last"`
}

// measureSteps times j.Steps consecutive training steps after warm-up ones
// (profiled if j.CPUProfile is set), then j.Steps eval forwards, as
// vit_ref.py's bench does.
func measureSteps(c layers.Config, j job) (stepsResult, error) {
	res := stepsResult{Backend: kernels.Backend(), Params: layers.CountParams(c)}
	if j.Precision.IsBF16() {
		res.Backend = kernels.BF16Backend()
	}
	tr, err := newTrainer(c, j)
	if err != nil {
		return res, err
	}
	defer tr.close()

	// 1. Training: warm-up, then the timed steps.
	for s := range j.Warmup {
		lv, err := tr.step(s)
		if err != nil {
			return res, err
		}
		if s == 0 {
			res.LossFirst = float64(lv)
		}
	}
	stop, err := startProfile(j.CPUProfile)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	for s := range j.Steps {
		lv, err := tr.step(j.Warmup + s)
		if err != nil {
			stop()
			return res, err
		}
		res.LossLast = float64(lv)
	}
	trainDur := time.Since(t0)
	stop()
	if math.IsNaN(res.LossLast) || math.IsInf(res.LossLast, 0) {
		return res, fmt.Errorf("loss is %v after %d steps", res.LossLast, j.Warmup+j.Steps)
	}

	// 2. Evaluation: forwards of the same batch on the eval graph.
	for range j.Warmup {
		if err := tr.forward(); err != nil {
			return res, err
		}
	}
	t0 = time.Now()
	for range j.Steps {
		if err := tr.forward(); err != nil {
			return res, err
		}
	}
	evalDur := time.Since(t0)

	imgs := float64(j.Steps * j.Batch)
	res.TrainImgS, res.EvalImgS = imgs/trainDur.Seconds(), imgs/evalDur.Seconds()
	res.StepMs = trainDur.Seconds() * 1000 / float64(j.Steps)
	res.EvalMs = evalDur.Seconds() * 1000 / float64(j.Steps)
	return res, nil
}

// startProfile starts a CPU profile into path (none if path is empty) and
// returns the function that stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, _, err := regfile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
