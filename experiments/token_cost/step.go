package main

import (
	"math/rand/v2"
	"slices"
	"time"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

// stepTime measures one training step of the model as train.Run takes it
// (train.Step: forward, soft-target cross entropy, backward, gradient
// clipping, the finite checks, the AdamW update) on random images and
// labels, float32: the fastest of steps timed steps after one warm-up step
// (the least disturbed by other processes on a shared machine).
func stepTime(c layers.Config, batch, steps int, seed uint64) (time.Duration, error) {
	m, err := layers.New(c, tensor.Float32, seed)
	if err != nil {
		return 0, err
	}
	step, err := train.NewStep(m, train.StepConfig{Batch: batch, Seed: seed, Optim: optim.DefaultConfig(),
		LR: func(int) float64 { return 1e-4 }})
	if err != nil {
		return 0, err
	}
	defer step.Close()

	rng := rand.New(rand.NewPCG(seed, 3))
	in := make([]float32, len(step.Graph().Input.Value().Data().([]float32)))
	for i := range in {
		in[i] = float32(rng.NormFloat64())
	}
	tgt := make([]float32, batch*c.NumClasses)
	for b := 0; b < batch; b++ {
		tgt[b*c.NumClasses+rng.IntN(c.NumClasses)] = 1
	}
	var ts []time.Duration
	for s := 0; s <= steps; s++ {
		t0 := time.Now()
		if _, err := step.Take(in, tgt, s); err != nil {
			return 0, err
		}
		if s > 0 {
			ts = append(ts, time.Since(t0))
		}
	}
	return slices.Min(ts), nil
}
