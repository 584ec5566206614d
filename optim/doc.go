// Package optim updates a model's weights: the [Optimizer] interface and its
// implementations ([AdamW] with PyTorch's arithmetic, [SGD] as
// torch.optim.SGD, [Lamb] as timm's), the learning-rate schedules (warmup, then cosine, constant or step), timm's
// layer-wise learning-rate decay, gradient clipping by global L2 norm, and an
// exponential moving average (EMA) of the weights.
//
// The package knows no graph library and no model: it sees a list of named
// float32 tensors ([Param]) whose Value slices alias the model's weights and
// whose Grad slices hold this step's gradients. The model supplies the
// parameter groups with them, as timm's models do with no_weight_decay() and
// group_matcher(): Param.NoDecay and Param.LayerID. Names are the checkpoint
// keys (blocks.3.attn.qkv.weight), and every piece of state (an optimizer's
// slots, the EMA's weights) is keyed by them, so a run resumes exactly from
// [Optimizer.SaveState] and [EMA.Weights] whatever order the parameters
// come in.
//
// # Optimizers
//
// An optimizer is one interface with several implementations, as gonum's
// optimize.Method is: [Optimizer] steps over the parameters and saves and
// restores an optimizer-neutral [State], a step count and named slots of
// per-parameter buffers (AdamW's "m" and "v", SGD's "momentum_buffer",
// Lamb's "exp_avg" and "exp_avg_sq"). [New] builds the one Config.Opt
// (optim.opt) names from a table, as timm's create_optimizer_v2 does:
// adamw, sgd and nesterov (SGD with Nesterov momentum), momentum (plain
// momentum, Config.Momentum) and lamb. Adding an optimizer is a row of that
// table (optimizer.go) and a file of its own. Every optimizer takes the
// same parameter groups ([Optimizer.Groups]), skips Frozen parameters, and
// leaves nothing modified when its checks fail. A state restored into
// another optimizer is refused with [ErrSlots].
//
// One training step, in order:
//
//	lr := sched.LR(step, stepsPerEpoch, totalSteps) // step = 0, 1, ...
//	norm := optim.ClipGradNorm(params, cfg.ClipGrad.Value())  // returns the pre-clip norm
//	if math.IsNaN(norm) || math.IsInf(norm, 0) { name, _ := optim.GradsFinite(params); ... skip }
//	err := opt.Step(params, lr)                       // opt from optim.New; layer-decay scales are applied inside
//	err = ema.Update(params, opt.Steps())             // if cfg.EMA
//
// Semantics follow torch.optim.AdamW and torch.optim.SGD (1.13,
// single-tensor paths), timm's Lamb,
// torch.nn.utils.clip_grad_norm_ and timm's CosineLRScheduler,
// param_groups_layer_decay and ModelEmaV3; each function's comment says where
// it departs from them.
package optim
