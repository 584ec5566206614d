package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/graph/kernels"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

// stepsResult is what a modeSteps child measured.
type stepsResult struct {
	Backend   string  `json:"backend"` // kernels.Backend()
	Params    int     `json:"params"`
	TrainImgS float64 `json:"train_img_s"` // steps·batch / time of the timed steps
	EvalImgS  float64 `json:"eval_img_s"`
	StepMs    float64 `json:"step_ms"` // mean training step
	EvalMs    float64 `json:"eval_ms"` // mean eval forward
	LossFirst float64 `json:"loss_first"`
	LossLast  float64 `json:"loss_last"`
}

// measureSteps times j.Steps training steps, each as train.Run does one
// (forward and backward on the tape machine, the gradient nodes' values read,
// global-norm clipping, the finiteness check, AdamW), after warm-up steps;
// then j.Steps forwards of a batch on train.NewEvaluator's graph. One
// fixed random batch is used throughout, as vit_ref.py's bench does.
func measureSteps(c layers.Config, j job) (stepsResult, error) {
	res := stepsResult{Backend: kernels.Backend(), Params: layers.CountParams(c)}
	m, err := layers.New(c, tensor.Float32, j.Seed)
	if err != nil {
		return res, err
	}

	// The training graph, exactly as train.Run builds it.
	tg, err := m.Build(j.Batch, layers.BuildOptions{Training: true, Seed: j.Seed})
	if err != nil {
		return res, err
	}
	targets := G.NewTensor(tg.G, tensor.Float32, 2, G.WithName("targets"),
		G.WithValue(tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(j.Batch, c.NumClasses))))
	loss, err := graph.SoftmaxCrossEntropy(tg.Logits, targets)
	if err != nil {
		return res, err
	}
	grads, err := G.Grad(loss, tg.Params...)
	if err != nil {
		return res, fmt.Errorf("gradients: %w", err)
	}
	vm := G.NewTapeMachine(tg.G)
	defer vm.Close()
	eval, err := train.NewEvaluator(m, j.Batch)
	if err != nil {
		return res, err
	}
	defer eval.Close()

	// A random normalised batch with one-hot targets.
	rng := rand.New(rand.NewPCG(j.Seed, 7))
	in := tg.Input.Value().Data().([]float32)
	for i := range in {
		in[i] = float32((rng.Float64() - mnistMean) / mnistStd)
	}
	tgt := targets.Value().Data().([]float32)
	for b := range j.Batch {
		tgt[b*c.NumClasses+rng.IntN(c.NumClasses)] = 1
	}
	evalIn := append([]float32(nil), in...)

	params := make([]optim.Param, len(m.Params))
	for i, p := range m.Params {
		params[i] = optim.Param{Name: p.Name, Shape: p.Shape, Value: p.Value.Data().([]float32)}
	}
	oc := optim.DefaultConfig()
	opt, err := optim.NewAdamW(oc, c.Depth)
	if err != nil {
		return res, err
	}
	step := func(s int) (float32, error) {
		tg.Stoch.Step = uint64(s)
		if err := vm.RunAll(); err != nil {
			return 0, fmt.Errorf("step %d: %w", s, err)
		}
		lv, _ := loss.Value().Data().(float32)
		for i, n := range grads {
			params[i].Grad = n.Value().Data().([]float32)
		}
		optim.ClipGradNorm(params, oc.ClipGrad)
		if name, ok := optim.GradsFinite(params); !ok {
			return 0, fmt.Errorf("step %d: gradient of %s is not finite", s, name)
		}
		if err := opt.Step(params, oc.LR); err != nil {
			return 0, fmt.Errorf("step %d: %w", s, err)
		}
		vm.Reset()
		return lv, nil
	}

	// 1. Training: warm-up, then the timed steps (profiled if asked).
	for s := range warmup {
		lv, err := step(s)
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
		lv, err := step(warmup + s)
		if err != nil {
			stop()
			return res, err
		}
		res.LossLast = float64(lv)
	}
	trainDur := time.Since(t0)
	stop()
	if math.IsNaN(res.LossLast) || math.IsInf(res.LossLast, 0) {
		return res, fmt.Errorf("loss is %v after %d steps", res.LossLast, warmup+j.Steps)
	}

	// 2. Evaluation: forwards of the same batch on the eval graph.
	for range warmup {
		if _, err := eval.Logits(evalIn, j.Batch); err != nil {
			return res, err
		}
	}
	t0 = time.Now()
	for range j.Steps {
		if _, err := eval.Logits(evalIn, j.Batch); err != nil {
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
	f, err := os.Create(path)
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
