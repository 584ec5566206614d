package main

import (
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

// trainer holds one config's training step (train.Step, as train.Run builds
// it), an evaluator of the same batch sharing its arena, and one fixed
// random batch (vit_ref.py's bench also repeats one batch).
type trainer struct {
	batch  int
	ts     *train.Step
	tg     *layers.Graph // the step's graph, for the floor's plan
	eval   *train.Evaluator
	x, tgt []float32
}

func newTrainer(c layers.Config, j job) (*trainer, error) {
	m, err := layers.New(c, tensor.Float32, j.Seed)
	if err != nil {
		return nil, err
	}
	oc := optim.DefaultConfig()
	tr := &trainer{batch: j.Batch}
	arena := graph.NewArena() // shared by both graphs, as train.Run does
	if tr.ts, err = train.NewStep(m, train.StepConfig{Batch: j.Batch, Seed: j.Seed, Optim: oc,
		LR: func(int) float64 { return oc.LR }, Arena: arena}); err != nil {
		return nil, err
	}
	tr.tg = tr.ts.Graph().Graph
	if tr.eval, err = train.NewEvaluatorIn(m, j.Batch, arena); err != nil {
		tr.ts.Close()
		return nil, err
	}

	// A random batch, normalised as MNIST is, with one-hot targets.
	rng := rand.New(rand.NewPCG(j.Seed, 7))
	tr.x = make([]float32, len(tr.tg.Input.Value().Data().([]float32)))
	for i := range tr.x {
		tr.x[i] = float32((rng.Float64() - mnistMean) / mnistStd)
	}
	tr.tgt = make([]float32, j.Batch*c.NumClasses)
	for b := range j.Batch {
		tr.tgt[b*c.NumClasses+rng.IntN(c.NumClasses)] = 1
	}
	return tr, nil
}

func (tr *trainer) close() {
	tr.ts.Close()
	tr.eval.Close()
}

// step is training step s as train.Run takes it (train.Step: forward and
// backward on the tape machine, clipping, the finite checks, the AdamW
// update). It returns the loss.
func (tr *trainer) step(s int) (float32, error) {
	st, err := tr.ts.Take(tr.x, tr.tgt, s)
	return float32(st.Loss), err
}

// forward is one eval forward of the batch.
func (tr *trainer) forward() error {
	_, err := tr.eval.Logits(tr.x, tr.batch)
	return err
}
