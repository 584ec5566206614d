package main

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
	"github.com/vitgo/vit/train"
)

// trainer holds one config's training graph, built exactly as train.Run
// builds it, its optimizer, an evaluator of the same batch, and one fixed
// random batch (vit_ref.py's bench also repeats one batch).
type trainer struct {
	cfg    layers.Config
	batch  int
	tgraph *train.TrainGraph
	tg     *layers.Graph
	loss   *G.Node
	grads  G.Nodes
	vm     G.VM
	eval   *train.Evaluator
	evalIn []float32
	params []optim.Param
	oc     optim.Config
	opt    *optim.AdamW
}

func newTrainer(c layers.Config, j job) (*trainer, error) {
	m, err := layers.New(c, tensor.Float32, j.Seed)
	if err != nil {
		return nil, err
	}
	tr := &trainer{cfg: c, batch: j.Batch, oc: optim.DefaultConfig()}
	arena := graph.NewArena() // shared by both graphs, as train.Run does
	if tr.tgraph, err = train.BuildTrainGraph(m, j.Batch, j.Seed, arena); err != nil {
		return nil, err
	}
	tr.tg, tr.loss, tr.grads, tr.vm = tr.tgraph.Graph, tr.tgraph.Loss, tr.tgraph.Grads, tr.tgraph.VM
	targets := tr.tgraph.Targets
	if tr.eval, err = train.NewEvaluatorIn(m, j.Batch, arena); err != nil {
		tr.vm.Close()
		return nil, err
	}

	// A random batch, normalised as MNIST is, with one-hot targets.
	rng := rand.New(rand.NewPCG(j.Seed, 7))
	in := tr.tg.Input.Value().Data().([]float32)
	for i := range in {
		in[i] = float32((rng.Float64() - mnistMean) / mnistStd)
	}
	tgt := targets.Value().Data().([]float32)
	for b := range j.Batch {
		tgt[b*c.NumClasses+rng.IntN(c.NumClasses)] = 1
	}
	tr.evalIn = append([]float32(nil), in...)

	tr.params = make([]optim.Param, len(m.Params))
	for i, p := range m.Params {
		tr.params[i] = optim.Param{Name: p.Name, Shape: p.Shape, Value: p.Value.Data().([]float32), NoDecay: p.NoWeightDecay, LayerID: p.LayerID}
	}
	if tr.opt, err = optim.NewAdamW(tr.oc); err != nil {
		tr.close()
		return nil, err
	}
	return tr, nil
}

func (tr *trainer) close() {
	tr.vm.Close()
	tr.eval.Close()
}

// step is one training step s as train.Run takes it: forward and backward
// on the tape machine, the gradient nodes' values read, global-norm
// clipping, the finiteness check, the AdamW update. It returns the loss.
func (tr *trainer) step(s int) (float32, error) {
	tr.tg.Stoch.Step = uint64(s)
	if err := tr.vm.RunAll(); err != nil {
		return 0, fmt.Errorf("step %d: %w", s, err)
	}
	lv, _ := tr.loss.Value().Data().(float32)
	for i, n := range tr.grads {
		tr.params[i].Grad = n.Value().Data().([]float32)
	}
	optim.ClipGradNorm(tr.params, tr.oc.ClipGrad)
	if name, ok := optim.GradsFinite(tr.params); !ok {
		return 0, fmt.Errorf("step %d: gradient of %s is not finite", s, name)
	}
	if err := tr.opt.Step(tr.params, tr.oc.LR); err != nil {
		return 0, fmt.Errorf("step %d: %w", s, err)
	}
	tr.vm.Reset()
	return lv, nil
}

// forward is one eval forward of the batch.
func (tr *trainer) forward() error {
	_, err := tr.eval.Logits(tr.evalIn, tr.batch)
	return err
}
