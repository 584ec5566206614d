// Package optim updates a model's weights: AdamW with PyTorch's arithmetic,
// the learning-rate schedules (warmup, then cosine, constant or step), timm's
// layer-wise learning-rate decay, gradient clipping by global L2 norm, and an
// exponential moving average (EMA) of the weights.
//
// The package knows no graph library and no model: it sees a list of named
// float32 tensors ([Param]) whose Value slices alias the model's weights and
// whose Grad slices hold this step's gradients. The model supplies the
// parameter groups with them, as timm's models do with no_weight_decay() and
// group_matcher(): Param.NoDecay and Param.LayerID. Names are the checkpoint
// keys (blocks.3.attn.qkv.weight), and every piece of state (AdamW's moments, the
// EMA's weights) is keyed by them, so a run resumes exactly from
// [AdamW.State] and [EMA.Weights] whatever order the parameters come in.
//
// One training step, in order:
//
//	lr := sched.LR(step, stepsPerEpoch, totalSteps) // step = 0, 1, ...
//	norm := optim.ClipGradNorm(params, cfg.ClipGrad.Value())  // returns the pre-clip norm
//	if math.IsNaN(norm) || math.IsInf(norm, 0) { name, _ := optim.GradsFinite(params); ... skip }
//	err := opt.Step(params, lr)                       // layer-decay scales are applied inside
//	err = ema.Update(params, opt.Steps())             // if cfg.EMA
//
// Semantics follow torch.optim.AdamW (1.13, single-tensor path),
// torch.nn.utils.clip_grad_norm_ and timm's CosineLRScheduler,
// param_groups_layer_decay and ModelEmaV3; each function's comment says where
// it departs from them.
package optim
