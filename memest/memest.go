package memest

import (
	"runtime"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/memory"
	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

// runtimeBytes is the Go runtime, code and goroutine stacks.
const runtimeBytes = 24 << 20

// maxSlots is counted for an optimizer whose state optim does not state
// (optim.SlotsPerParam): AdamW's two values, the most of any.
const maxSlots = 2

// Spec is what the estimate reads: a config's sections with their
// defaults filled in.
type Spec struct {
	Model     layers.Config
	Data      data.Config
	Batch     int  // train.batch_size (training only)
	EvalBatch int  // train.eval_batch_size, or batch_size when unset
	Threads   int  // train.threads; 0 = every core
	GradAccum int  // train.grad_accum_steps
	EMA       bool // optim.ema
	Training  bool // false: evaluation alone
	// Optimizer names the optimizer whose state is counted
	// (optim.SlotsPerParam; "" = adamw, and a name it does not know counts
	// as many values as AdamW).
	Optimizer string
	// Teacher is distill.teacher's architecture when training with a
	// teacher (distill.type hard or soft); nil otherwise.
	Teacher *layers.Config
	// BF16 is train.precision bf16, and Recompute train.recompute
	// (training only).
	BF16      bool
	Recompute layers.Recompute
	// Frozen holds the names of the parameters that are not trained
	// (finetune.freeze, finetune.linear_probe): they get no gradient and
	// no optimizer state.
	Frozen map[string]bool
}

// Of estimates the memory of s: of training (s.Training) or of evaluating a
// model of s.Model at s.EvalBatch on s.Data.
func Of(s Spec) memory.Estimate {
	m, training := s.Model, s.Training
	f := func(x int) float64 { return float64(x) }
	threads := f(s.Threads)
	if threads == 0 {
		threads = f(runtime.NumCPU())
	}
	batch := f(s.Batch)
	B := batch
	if k := s.GradAccum; k > 1 {
		B /= f(k) // the training graph is built for one micro-batch
	}
	Be := f(s.EvalBatch)
	pixels := f(m.InChans) * f(m.ImgSize[0]) * f(m.ImgSize[1])
	var e memory.Parts
	params, trained := layers.ParamBytes(m, s.Frozen)
	e.Params = params
	act := m.Activations(layers.ActivationOptions{Training: training, Batch: B, EvalBatch: Be, Threads: threads,
		BF16: s.BF16, Recompute: s.Recompute})
	if training {
		slots, ok := optim.SlotsPerParam(s.Optimizer)
		if !ok {
			slots = maxSlots // a name optim does not state: count the most any optimizer keeps
		}
		e.Grads = trained
		e.Optimizer = f(slots) * trained
		if s.EMA {
			e.EMA = params
		}
		e.TrainAct = act.Train
		// While a checkpoint is written, the optimizer state and the EMA are
		// copied out (optim State, EMA Weights); the files' tensors are
		// views of those copies and of the live weights (safetensors.Float32View).
		e.Save = e.Optimizer + e.EMA
		e.Prefetch = 4 * batch * (pixels + f(m.NumClasses)) * f(s.Data.Prefetch+2)
		if tc := s.Teacher; tc != nil {
			e.Teacher = tc.FrozenBytes(B, threads)
		}
	}
	e.EvalAct = act.Eval
	e.Attention = act.Attention
	e.Prefetch += 4 * Be * (pixels + f(m.NumClasses)) * f(s.Data.Prefetch+2)
	e.Data = data.ResidentBytes(s.Data)
	e.Decode = data.DecodeBytes(s.Data)
	e.Runtime = runtimeBytes
	return e.Estimate()
}

// Load is the memory of loading a model of m and running it on one image
// with the data defaults: what checkpoint.LoadModel checks before it
// allocates the weights.
func Load(m layers.Config) memory.Estimate {
	return Of(Spec{Model: m, Data: data.DefaultConfig(), EvalBatch: 1})
}
