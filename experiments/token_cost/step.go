package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// stepTime measures one training step of the model as train.Run does it
// (forward, soft-target cross entropy, backward, gradient clipping, AdamW
// update) on random images and labels, float32: the fastest of steps timed
// steps after one warm-up step (the least disturbed by other processes on a
// shared machine).
func stepTime(c layers.Config, batch, steps int, seed uint64) (time.Duration, error) {
	m, err := layers.New(c, tensor.Float32, seed)
	if err != nil {
		return 0, err
	}
	tg, err := m.Build(batch, layers.BuildOptions{Training: true, Seed: seed})
	if err != nil {
		return 0, err
	}
	targets := G.NewTensor(tg.G, tensor.Float32, 2, G.WithName("targets"),
		G.WithValue(tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, c.NumClasses))))
	loss, err := graph.SoftmaxCrossEntropy(tg.Logits, targets)
	if err != nil {
		return 0, err
	}
	grads, err := G.Grad(loss, tg.Params...)
	if err != nil {
		return 0, fmt.Errorf("gradients: %w", err)
	}
	vm := G.NewTapeMachine(tg.G)
	defer vm.Close()

	rng := rand.New(rand.NewPCG(seed, 3))
	in := tg.Input.Value().Data().([]float32)
	for i := range in {
		in[i] = float32(rng.NormFloat64())
	}
	tgt := targets.Value().Data().([]float32)
	for b := 0; b < batch; b++ {
		tgt[b*c.NumClasses+rng.IntN(c.NumClasses)] = 1
	}
	params := make([]optim.Param, len(m.Params))
	for i, p := range m.Params {
		params[i] = optim.Param{Name: p.Name, Shape: p.Shape, Value: p.Value.Data().([]float32), NoDecay: p.NoWeightDecay, LayerID: p.LayerID}
	}
	oc := optim.DefaultConfig()
	opt, err := optim.NewAdamW(oc)
	if err != nil {
		return 0, err
	}
	var ts []time.Duration
	for s := 0; s <= steps; s++ {
		t0 := time.Now()
		tg.Stoch.Step = uint64(s)
		if err := vm.RunAll(); err != nil {
			return 0, fmt.Errorf("step %d: %w", s, err)
		}
		for i, n := range grads {
			params[i].Grad = n.Value().Data().([]float32)
		}
		optim.ClipGradNorm(params, oc.ClipGrad)
		if err := opt.Step(params, 1e-4); err != nil {
			return 0, err
		}
		vm.Reset()
		if s > 0 {
			ts = append(ts, time.Since(t0))
		}
	}
	return slices.Min(ts), nil
}
