package train

import (
	"errors"
	"fmt"
	"math"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/dist"
	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// Step is the one training step of this module: train.Run, the benchmark,
// the experiments and the tests all train through it. It owns the training
// graph and its tape machine, the binding of the graph's gradients to the
// optimizer's named parameters, gradient clipping, the finite checks, the
// optimizer's update (optim.opt: AdamW, SGD or Lamb), the learning-rate
// schedule and the EMA of the weights.
//
// A step has two phases with a clear boundary between them:
//
//	Backward(x, targets, step)  forward and backward pass of one batch: the
//	                            loss is returned, the gradients are left in
//	                            the graph's gradient buffers
//	Update(step)                reduce → clip → finite checks → optimizer → EMA →
//	                            weight check
//
// and [Step.Take] does both. Data-parallel training and gradient
// accumulation belong at that boundary: Backward runs the k micro-batches
// of its rows one after another, each run's gradients added into one
// accumulation buffer (the graph overwrites its own buffers every run);
// Update's first phase, reduce, then
// sums those over the ranks through a communicator (an all-reduce) and
// scales by 1/(k·ranks), so that every rank clips and updates the same
// gradients and the weights stay equal everywhere (gradSum). With one rank
// and one micro-batch, reduce binds the graph's buffers as they are.
//
// Between Backward and Update no other graph planned into the same arena
// (the evaluator) may run: it would overwrite the gradients.
type Step struct {
	tg     *TrainGraph
	params []optim.Param   // the model's parameters, Grad bound to the graph's gradients by Update
	opt    optim.Optimizer // the one optim.opt names
	ema    *optim.EMA      // nil without optim.ema
	lr     func(step int) float64
	clip   float64
	loss   float32 // of the last Backward: this rank's mean over its micro-batches

	comm  dist.Comm
	micro [][]int  // each micro-batch's positions in the global batch (one nil: the batch itself)
	sum   *gradSum // the gradients summed over micro-batches and ranks

	teacher    *Teacher // distillation: labels each micro-batch (nil without)
	kd         *kdLoss
	teacherBad bool // this rank's teacher gave non-finite logits in the last Backward (several ranks)
}

// StepConfig says how to build a [Step].
type StepConfig struct {
	Batch int          // images per step (the graph's fixed batch)
	Seed  uint64       // seeds the stochastic layers (dropout, drop path)
	Optim optim.Config // the optimizer (optim.opt), clipping, schedule, EMA
	// StepsPerEpoch and TotalSteps place each step on Optim's schedule.
	StepsPerEpoch, TotalSteps int
	// LR, if not nil, replaces the schedule: the learning rate of each
	// (0-based) step.
	LR func(step int) float64
	// Arena receives the graph's planned activations (nil: a fresh one). An
	// evaluator built into the same arena shares that memory.
	Arena *graph.Arena
	// Comm makes the step data-parallel (nil: one process): Batch stays the
	// global batch, each rank passes its share (data.Slice's rows, as a
	// loader with the same Rank and Ranks yields them) to Take, and the
	// gradients are summed over the ranks before every update.
	Comm dist.Comm
	// GradAccum splits a rank's share into this many micro-batches (0 or 1:
	// one), run one after another with their gradients summed; the graph is
	// built for one micro-batch.
	GradAccum int
	// Frozen names the parameters not to train (finetune.freeze,
	// linear_probe; see FrozenNames): the graph computes no gradient for
	// them and none below the lowest trainable block, and the optimizer
	// keeps no state for them and never changes them (optim.Param.Frozen).
	// Every name must be a parameter of the model, and at least one
	// parameter must be left to train.
	Frozen map[string]bool
	// Distill and Teacher train a distilled model (model.distilled) from a
	// frozen teacher with DeiT's loss (DistillConfig); the teacher runs on
	// each micro-batch of this rank's rows. With distill.type none (or a
	// zero Distill) the loss is the cross entropy of the logits alone, a
	// distilled model's being the mean of its two heads.
	Distill DistillConfig
	Teacher *Teacher
	// Precision is the arithmetic of the training graph's matrix products
	// (train.precision; "" = fp32; see layers.BuildOptions.Precision). The
	// weights, the optimizer state, the EMA and the gradient all-reduce are
	// float32 whatever it is.
	Precision graph.Precision
	// Recompute is what the training graph recomputes in its backward pass
	// (train.recompute; layers.BuildOptions.Recompute). It changes no bit.
	Recompute layers.Recompute
}

// StepStats is what one step reports.
type StepStats struct {
	Loss     float64 // the batch's mean (soft-target) cross entropy; with distillation DeiT's loss (DistillConfig)
	GradNorm float64 // global L2 norm of the gradients before clipping
	LR       float64 // the learning rate of the update
	// Reduce is the time spent in the gradient all-reduce (waiting for the
	// other ranks included); 0 on one rank.
	Reduce time.Duration
}

// NonFiniteError is returned by a [Step] whose loss, gradients or updated
// weights hold a NaN or ±Inf. Nothing non-finite is ever checkpointed: the
// loss and gradients are checked before the update, the weights after it
// (so the caller must not save them), and the EMA weights before they are
// handed out for a checkpoint.
type NonFiniteError struct {
	Step  int     // the step (0-based: the steps done before it)
	What  string  // "loss", "gradient", "weight" or "EMA weight"
	Name  string  // the tensor; "" for the loss
	Value float64 // the loss, when What is "loss"
}

func (e *NonFiniteError) Error() string {
	if e.What == "loss" {
		return fmt.Sprintf("step %d: loss is %v (non-finite)", e.Step, e.Value)
	}
	return fmt.Sprintf("step %d: %s %s is non-finite", e.Step, e.What, e.Name)
}

// NewStep builds the training step of model: its training graph for
// c.Batch images, the optimizer over its parameters and, with c.Optim.EMA,
// an EMA that starts from the model's current weights.
func NewStep(model *layers.VisionTransformer, c StepConfig) (*Step, error) {
	opt, err := optim.New(c.Optim)
	if err != nil {
		return nil, err
	}
	params := make([]optim.Param, len(model.Params))
	nFrozen := 0
	for i, p := range model.Params {
		v, ok := p.Value.Data().([]float32)
		if !ok {
			return nil, fmt.Errorf("train step: parameter %s is %v, want float32", p.Name, p.Value.Dtype())
		}
		// The parameter groups come from the model (layers/groups.go).
		params[i] = optim.Param{Name: p.Name, Shape: p.Shape, Value: v, NoDecay: p.NoWeightDecay, LayerID: p.LayerID, Frozen: c.Frozen[p.Name]}
		if params[i].Frozen {
			nFrozen++
		}
	}
	if nFrozen != len(c.Frozen) {
		for name := range c.Frozen {
			if model.Param(name) == nil {
				return nil, fmt.Errorf("train step: frozen parameter %s is not in the model", name)
			}
		}
	}
	if nFrozen == len(params) {
		return nil, fmt.Errorf("train step: every parameter is frozen")
	}
	s := &Step{params: params, opt: opt, lr: c.LR, clip: c.Optim.WithDefaults().ClipGrad.Value(), comm: c.Comm}
	if s.comm == nil {
		s.comm = dist.Single()
	}
	if s.micro, err = microRows(c.Batch, max(c.GradAccum, 1), s.comm); err != nil {
		return nil, err
	}
	s.sum = newGradSum(s.comm, len(s.micro), params)
	graphBatch := c.Batch
	if s.micro[0] != nil {
		graphBatch = len(s.micro[0])
	}
	if s.lr == nil {
		sched, spe, total := c.Optim.Schedule(), c.StepsPerEpoch, c.TotalSteps
		s.lr = func(step int) float64 { return sched.LR(step, spe, total) }
	}
	if c.Optim.EMA {
		if s.ema, err = optim.NewEMA(c.Optim.EMADecay, c.Optim.EMAWarmup, params); err != nil {
			return nil, err
		}
	}
	var dc *DistillConfig
	if c.Distill.Type.On() {
		if c.Teacher == nil {
			return nil, fmt.Errorf("train step: distill.type %q without a teacher", c.Distill.Type)
		}
		if err := c.Teacher.prepare(graphBatch, model.Config.ImgSize); err != nil {
			return nil, err
		}
		s.teacher, dc = c.Teacher, &c.Distill
	}
	if s.tg, s.kd, err = buildTrainGraph(model, graphBatch, c.Seed, layers.BuildOptions{Precision: c.Precision, Recompute: c.Recompute}, c.Arena, c.Frozen, dc); err != nil {
		return nil, err
	}
	return s, nil
}

// Close releases the tape machine (and the teacher's).
func (s *Step) Close() {
	s.tg.VM.Close()
	if s.teacher != nil {
		s.teacher.Close()
	}
}

// Graph returns the training graph, for reading its logits after Backward.
func (s *Step) Graph() *TrainGraph { return s.tg }

// Take runs one whole step on a batch: [Step.Backward], then [Step.Update].
func (s *Step) Take(x, targets []float32, step int) (StepStats, error) {
	if _, err := s.Backward(x, targets, step); err != nil {
		return StepStats{}, err
	}
	return s.Update(step)
}

// Backward runs the forward and backward pass of one batch: x is (rows, C,
// H, W) normalised images, targets (rows, classes) soft targets, rows the
// batch (or on several ranks this rank's share of it), and step keys the
// dropout and drop-path masks. With train.grad_accum_steps the rows run as
// micro-batches, their gradients summed. It returns the mean loss over the
// rows and leaves the gradients for [Step.Update]. On one rank a non-finite
// loss is a *NonFiniteError here; on several, Update reports it on every
// rank alike.
func (s *Step) Backward(x, targets []float32, step int) (float32, error) {
	in := s.tg.Input.Value().Data().([]float32)
	tgt := s.tg.Targets.Value().Data().([]float32)
	k := len(s.micro)
	if len(x) != k*len(in) || len(targets) != k*len(tgt) {
		return 0, fmt.Errorf("step %d: batch of %d pixels and %d targets, the step takes %d and %d", step, len(x), len(targets), k*len(in), k*len(tgt))
	}
	var sum float32
	for j, rows := range s.micro {
		copy(in, x[j*len(in):(j+1)*len(in)])
		copy(tgt, targets[j*len(tgt):(j+1)*len(tgt)])
		if s.teacher != nil { // the teacher labels the same (augmented, mixed) images
			tl, err := s.teacher.Logits(in)
			if err != nil {
				return 0, fmt.Errorf("step %d: %w", step, err)
			}
			if err := s.checkTeacher(tl, step); err != nil {
				return 0, err
			}
			if err := s.kd.fill(tl); err != nil {
				return 0, fmt.Errorf("step %d: %w", step, err)
			}
		}
		s.tg.Stoch.Step = uint64(step)
		s.tg.Stoch.Rows = rows
		s.tg.VM.Reset()
		if err := s.tg.VM.RunAll(); err != nil {
			return 0, fmt.Errorf("step %d: %w", step, err)
		}
		loss, _ := s.tg.Loss.Value().Data().(float32)
		if !finite(loss) && s.comm.Size() == 1 {
			return 0, &NonFiniteError{Step: step, What: "loss", Value: float64(loss)}
		}
		s.sum.add(j, s.tg.Grads, loss)
		sum += loss
	}
	s.loss = sum / float32(k)
	return s.loss, nil
}

// Update turns the gradients of the last [Step.Backward] into an update of
// the weights: reduce (see [Step]), clip to the global norm optim.clip_grad,
// check the gradients, the optimizer's update at the schedule's learning
// rate of step, update the EMA, and check the new weights. A non-finite gradient stops
// before the update; non-finite weights after it: both are a
// *NonFiniteError, and after the latter the weights must not be saved.
func (s *Step) Update(step int) (StepStats, error) { return s.UpdateAt(step, s.LR(step)) }

// LR is the learning rate of the update of step (0-based): StepConfig.LR's,
// or else the schedule's of StepConfig.Optim (warmup, then cosine, constant
// or step).
func (s *Step) LR(step int) float64 { return s.lr(step) }

// UpdateAt is [Step.Update] at the learning rate lr, the loop's
// s.LR(step).
func (s *Step) UpdateAt(step int, lr float64) (StepStats, error) {
	if err := s.agreeTeacher(step); err != nil {
		return StepStats{}, err
	}
	start := time.Now()
	loss, err := s.sum.reduce(s.params, s.tg.Trained, s.tg.Grads, s.loss)
	if err != nil {
		return StepStats{}, fmt.Errorf("step %d: %w", step, err)
	}
	var took time.Duration
	if s.comm.Size() > 1 {
		took = time.Since(start)
	}
	if !finite(loss) {
		return StepStats{}, &NonFiniteError{Step: step, What: "loss", Value: float64(loss)}
	}
	norm := optim.ClipGradNorm(s.params, s.clip)
	// The norm sums every gradient's squares in float64, which finite
	// float32 squares cannot overflow: it is finite exactly when every
	// gradient is, so the scan that names the culprit runs only when not.
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		if name, ok := optim.GradsFinite(s.params); !ok {
			return StepStats{}, &NonFiniteError{Step: step, What: "gradient", Name: name}
		}
	}
	if err := s.opt.Step(s.params, lr); err != nil {
		return StepStats{}, fmt.Errorf("step %d: %w", step, err)
	}
	if s.ema != nil {
		if err := s.ema.Update(s.params, step+1); err != nil {
			return StepStats{}, err
		}
	}
	if name, ok := optim.ValuesFinite(s.params); !ok {
		return StepStats{}, &NonFiniteError{Step: step, What: "weight", Name: name}
	}
	return StepStats{Loss: float64(loss), GradNorm: norm, LR: lr, Reduce: took}, nil
}

// EMAWeights returns a copy of the EMA weights by parameter name, nil
// without EMA.
func (s *Step) EMAWeights() map[string][]float32 {
	if s.ema == nil {
		return nil
	}
	return s.ema.Weights()
}

// SaveTo fills the optimizer's, the EMA's and the weights' part of a
// checkpoint's state (st.Weights aliases the live weights). Non-finite EMA
// weights are a *NonFiniteError: nothing non-finite is saved.
func (s *Step) SaveTo(st *State, step int) error {
	ost := s.opt.SaveState()
	st.OptStep, st.Slots = ost.Step, ost.Slots
	st.M, st.V = adamWViews(ost.Slots)
	st.Weights = make(map[string][]float32, len(s.params))
	for _, p := range s.params {
		st.Weights[p.Name] = p.Value
	}
	st.EMA = s.EMAWeights()
	for name, w := range st.EMA {
		if !allFinite(w) {
			return &NonFiniteError{Step: step, What: "EMA weight", Name: name}
		}
	}
	return nil
}

// Restore sets the weights, the optimizer state and the EMA from a state
// saved by [Step.SaveTo]: every parameter must be there with its size, and
// nothing else.
func (s *Step) Restore(st State) error {
	if len(st.Weights) != len(s.params) {
		return fmt.Errorf("%d model tensors, the model has %d parameters", len(st.Weights), len(s.params))
	}
	for _, p := range s.params {
		v, ok := st.Weights[p.Name]
		if !ok {
			return fmt.Errorf("no weights for %s", p.Name)
		}
		if len(v) != len(p.Value) {
			return fmt.Errorf("%s: %d values, want %d", p.Name, len(v), len(p.Value))
		}
	}
	if err := s.opt.RestoreState(optim.State{Step: st.OptStep, Slots: st.optimSlots()}); err != nil {
		if errors.Is(err, optim.ErrSlots) {
			return &OptimizerChangeError{Err: err}
		}
		return err
	}
	if s.ema != nil {
		if st.EMA == nil {
			return fmt.Errorf("optim.ema is on but the state holds no EMA weights")
		}
		if err := s.ema.LoadWeights(st.EMA); err != nil {
			return err
		}
	}
	for _, p := range s.params {
		copy(p.Value, st.Weights[p.Name])
	}
	return nil
}

// OptimizerChangeError is returned by [Step.Restore] (and so by a resume)
// when the state holds another optimizer's slots: optim.opt differs from
// the optimizer that wrote it. Err wraps optim.ErrSlots.
type OptimizerChangeError struct {
	Err error
}

func (e *OptimizerChangeError) Error() string {
	return fmt.Sprintf("optim.opt: the state was written by another optimizer: %v", e.Err)
}

func (e *OptimizerChangeError) Unwrap() error { return e.Err }

func finite(v float32) bool { return v-v == 0 }

func allFinite(x []float32) bool {
	for _, v := range x {
		if v-v != 0 { // NaN − NaN and Inf − Inf are NaN; finite x − x is 0
			return false
		}
	}
	return true
}

// TrainGraph is one training step's graph: the model's forward pass in
// training mode for a fixed batch, the soft-target cross entropy, the
// gradients of every parameter, and the tape machine that runs them.
type TrainGraph struct {
	*layers.Graph
	Targets *G.Node // (batch, classes) soft targets, set before each run
	Loss    *G.Node // scalar mean cross entropy
	Grads   G.Nodes // d Loss / d Params[Trained[i]], read after each run
	Trained []int   // the indices in Params of the trained (not frozen) parameters, ascending
	VM      G.VM    // run with RunAll, then Reset
	Plan    graph.PlanStats
}

// buildTrainGraph builds the training graph of model for batch images, with
// stochastic layers seeded by seed, the precision and recompute choice of
// arith (its other fields are ignored), and plans its activations into arena
// (nil: a fresh one). With dc (distillation on) the graph returns the
// distilled model's two heads apart and the loss is DeiT's (buildKDLoss). An Evaluator built into the same arena shares that
// memory: the two graphs never run at once.
//
// Gradients are taken with respect to the parameters not in frozen only,
// and the nodes that no output reads are pruned (graph.Prune): Gorgonia's
// differentiation visits only the nodes between a trained parameter and the
// loss, so nothing below the lowest trainable block runs backward, and the
// weight-gradient products of frozen Linears it builds on the way (and the
// patch embedding's input gradient) are dropped unrun.
//
// The gradient nodes' own values are read each step: with BindDualValues
// Gorgonia v0.9.18 adds every run's gradient into the dual values (Reset does
// not clear them), which would sum gradients across steps.
func buildTrainGraph(model *layers.VisionTransformer, batch int, seed uint64, arith layers.BuildOptions, arena *graph.Arena, frozen map[string]bool, dc *DistillConfig) (*TrainGraph, *kdLoss, error) {
	g, err := model.Build(batch, layers.BuildOptions{Training: true, Seed: seed, DistilledTraining: dc != nil, Precision: arith.Precision, Recompute: arith.Recompute})
	if err != nil {
		return nil, nil, err
	}
	c := model.Config.NumClasses
	t := &TrainGraph{Graph: g}
	t.Targets = G.NewTensor(g.G, tensor.Float32, 2, G.WithName("targets"),
		G.WithValue(tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, c))))
	var kd *kdLoss
	if dc != nil {
		t.Loss, kd, err = buildKDLoss(g, t.Targets, *dc)
	} else {
		t.Loss, err = graph.SoftmaxCrossEntropy(g.Logits, t.Targets)
	}
	if err != nil {
		return nil, nil, err
	}
	var wrt G.Nodes
	for i, p := range model.Params {
		if !frozen[p.Name] {
			t.Trained = append(t.Trained, i)
			wrt = append(wrt, g.Params[i])
		}
	}
	if t.Grads, err = G.Grad(t.Loss, wrt...); err != nil {
		return nil, nil, fmt.Errorf("gradients: %w", err)
	}
	roots := G.Nodes{t.Loss, g.Logits, g.Features}
	if g.DistLogits != nil {
		roots = append(roots, g.DistLogits)
	}
	g.G = graph.Prune(g.G, append(roots, t.Grads...)...)
	if arena == nil {
		arena = graph.NewArena()
	}
	// The loss, logits and features keep memory of their own: they are what a
	// caller may read after a run (the gradients are sinks, kept anyway).
	keep := []*G.Node{t.Loss, g.Logits, g.Features}
	if g.DistLogits != nil {
		keep = append(keep, g.DistLogits)
	}
	if t.Plan, err = graph.PlanBuffers(g.G, arena, keep...); err != nil {
		return nil, nil, err
	}
	t.VM = G.NewTapeMachine(g.G)
	return t, kd, nil
}
