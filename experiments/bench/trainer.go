package main

import (
	"math/rand/v2"

	"github.com/vitgo/vit/experiments/internal/harness"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

// trainer holds one config's training step (train.Step, as train.Run builds
// it), an evaluator of the same batch sharing its arena, and one fixed
// random batch (vit_ref.py's bench also repeats one batch): MNIST-shaped
// uniform pixels normalised with MNIST's mean and std, one-hot targets.
type trainer struct {
	batch  int
	ts     *train.Step
	tg     *layers.Graph // the step's graph, for the floor's plan
	eval   *train.Evaluator
	x, tgt []float32
}

func newTrainer(c layers.Config, j job) (*trainer, error) {
	arena := graph.NewArena() // shared by both graphs, as train.Run does
	lr := optim.DefaultConfig().LR
	ts, m, err := harness.NewStep(c, j.Batch, j.Seed, train.StepConfig{LR: func(int) float64 { return lr }, Arena: arena})
	if err != nil {
		return nil, err
	}
	tr := &trainer{batch: j.Batch, ts: ts, tg: ts.Graph().Graph}
	if tr.eval, err = train.NewEvaluatorIn(m, j.Batch, arena); err != nil {
		ts.Close()
		return nil, err
	}
	tr.x, tr.tgt = harness.RandomBatch(rand.New(rand.NewPCG(j.Seed, 7)), j.Batch, c.InChans*c.ImgSize[0]*c.ImgSize[1], c.NumClasses,
		func(r *rand.Rand) float64 { return (r.Float64() - mnistMean) / mnistStd })
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
