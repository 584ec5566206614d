package train

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
)

// TrainGraph is one training step's graph: the model's forward pass in
// training mode for a fixed batch, the soft-target cross entropy, the
// gradients of every parameter, and the tape machine that runs them.
type TrainGraph struct {
	*layers.Graph
	Targets *G.Node // (batch, classes) soft targets, set before each run
	Loss    *G.Node // scalar mean cross entropy
	Grads   G.Nodes // d Loss / d Params[i], read after each run
	VM      G.VM    // run with RunAll, then Reset
	Plan    graph.PlanStats
}

// BuildTrainGraph builds the training step of model for batch images, with
// stochastic layers seeded by seed, and plans its activations into arena
// (nil: a fresh one). An Evaluator built into the same arena shares that
// memory: the two graphs never run at once.
//
// The gradient nodes' own values are read each step: with BindDualValues
// Gorgonia v0.9.18 adds every run's gradient into the dual values (Reset does
// not clear them), which would sum gradients across steps.
func BuildTrainGraph(model *layers.VisionTransformer, batch int, seed uint64, arena *graph.Arena) (*TrainGraph, error) {
	g, err := model.Build(batch, layers.BuildOptions{Training: true, Seed: seed})
	if err != nil {
		return nil, err
	}
	c := model.Config.NumClasses
	t := &TrainGraph{Graph: g}
	t.Targets = G.NewTensor(g.G, tensor.Float32, 2, G.WithName("targets"),
		G.WithValue(tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, c))))
	if t.Loss, err = graph.SoftmaxCrossEntropy(g.Logits, t.Targets); err != nil {
		return nil, err
	}
	if t.Grads, err = G.Grad(t.Loss, g.Params...); err != nil {
		return nil, fmt.Errorf("gradients: %w", err)
	}
	if arena == nil {
		arena = graph.NewArena()
	}
	// The loss, logits and features keep memory of their own: they are what a
	// caller may read after a run (the gradients are sinks, kept anyway).
	if t.Plan, err = graph.PlanBuffers(g.G, arena, t.Loss, g.Logits, g.Features); err != nil {
		return nil, err
	}
	t.VM = G.NewTapeMachine(g.G)
	return t, nil
}

// Close releases the tape machine.
func (t *TrainGraph) Close() { t.VM.Close() }
