package main

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/train"
)

// stepTime measures one training step of the model as train.Run takes it
// (train.Step: forward, soft-target cross entropy, backward, gradient
// clipping, the finite checks, the AdamW update) on random images and
// labels, float32: the fastest of steps timed steps after one warm-up step
// (the least disturbed by other processes on a shared machine).
func stepTime(c layers.Config, batch, steps int, seed uint64) (time.Duration, error) {
	step, _, err := harness.NewStep(c, batch, seed, train.StepConfig{LR: func(int) float64 { return 1e-4 }})
	if err != nil {
		return 0, err
	}
	defer step.Close()
	in, tgt := harness.RandomBatch(rand.New(rand.NewPCG(seed, 3)), batch, c.InChans*c.ImgSize[0]*c.ImgSize[1], c.NumClasses,
		(*rand.Rand).NormFloat64)
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
