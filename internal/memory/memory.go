// Package memory is the helper floor of the memory estimate: the
// estimate's type (Estimate, summed from float64 Parts), its table for
// -dry-run (Format), and the check against the memory the machine has
// left (Check, Available, CheckMachine), refusing a run that does not fit
// with an error naming the config key that contributes most. It imports
// nothing of the domain: package memest computes the parts from what the
// model (layers), the data set (data) and the optimizer (optim) state of
// their own bytes, and the trainer (train), the evaluator's checkpoint
// loading (checkpoint, evaluate), classify and the dry run share it.
package memory

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/meminfo"
)

// Estimate is the memory a run needs, by part, in bytes, computed from
// the config alone (nothing is allocated; package memest, whose parts come
// from their owners: layers, data and optim). The total was checked
// against peak RSS (train's TestEstimateMatchesMeasuredRSS; README "What
// the trainer refuses, and why").
type Estimate struct {
	Params    int64 // the weights
	Grads     int64 // one gradient per weight
	Optimizer int64 // the optimizer's state (AdamW's two moments)
	EMA       int64 // the EMA copy of the weights (optim.ema)
	TrainAct  int64 // training graph activations at train.batch_size (÷ grad_accum_steps), attention included
	EvalAct   int64 // what the evaluation graph at train.eval_batch_size adds
	Attention int64 // of TrainAct+EvalAct: attention scratch ((T, T) scores per goroutine, K/V packs); no stored maps
	Data      int64 // the data set held in memory (MNIST, Fashion-MNIST, CIFAR-10: its row of data.Datasets)
	Prefetch  int64 // batches in flight in the training and evaluation loaders
	Decode    int64 // decodes in flight of a data set of image files (folder, csv): data.workers images at the decoded-bytes limit, at most the decode budget
	Save      int64 // transient while a checkpoint is written: the copies of the optimizer state and EMA
	Teacher   int64 // distillation's frozen teacher: weights, their packed copy, its input and activations at the micro-batch
	Runtime   int64 // Go runtime, code and goroutine stacks
	Peak      int64 // the sum: what the process's RSS is expected to reach
}

// Parts is Estimate in float64, as the owners state their bytes, so that
// no product of bounded sizes can overflow before it is compared; Peak is
// their sum (Estimate).
type Parts struct {
	Params, Grads, Optimizer, EMA, TrainAct, EvalAct, Attention, Data, Prefetch, Decode, Save, Teacher, Runtime float64
}

// Estimate rounds p's parts down to bytes, saturating at MaxInt64/2, and
// adds them up into Peak (Attention is part of TrainAct and EvalAct).
func (p Parts) Estimate() Estimate {
	sat := func(x float64) int64 {
		if !(x < math.MaxInt64/2) {
			return math.MaxInt64 / 2
		}
		return int64(x)
	}
	// A checkpoint is encoded while the activations are still allocated, so
	// its transient copy adds to the steady state.
	peak := p.Params + p.Grads + p.Optimizer + p.EMA + p.TrainAct + p.EvalAct + p.Data + p.Prefetch + p.Decode + p.Runtime + p.Save + p.Teacher
	return Estimate{
		Params: sat(p.Params), Grads: sat(p.Grads), Optimizer: sat(p.Optimizer), EMA: sat(p.EMA),
		TrainAct: sat(p.TrainAct), EvalAct: sat(p.EvalAct), Attention: sat(p.Attention),
		Data: sat(p.Data), Prefetch: sat(p.Prefetch), Decode: sat(p.Decode), Save: sat(p.Save), Teacher: sat(p.Teacher), Runtime: sat(p.Runtime), Peak: sat(peak),
	}
}

// Format prints the estimate as a table, as -dry-run shows it.
func (e Estimate) Format(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "memory estimate\t\t")
	for _, r := range []struct {
		name string
		v    int64
	}{
		{"parameters", e.Params}, {"gradients", e.Grads}, {"optimizer state (AdamW m, v)", e.Optimizer}, {"EMA", e.EMA},
		{"activations, training", e.TrainAct}, {"activations, evaluation", e.EvalAct},
		{"  of which attention scratch", e.Attention}, {"data set in memory", e.Data}, {"prefetch buffers", e.Prefetch},
		{"folder decodes in flight (bound)", e.Decode},
		{"checkpoint encoding (transient)", e.Save}, {"distillation teacher (frozen)", e.Teacher}, {"Go runtime", e.Runtime}, {"peak", e.Peak},
	} {
		if r.v == 0 && r.name != "peak" {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", r.name, FormatBytes(r.v))
	}
	return tw.Flush()
}

// FormatBytes renders n as MiB or GiB.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<40:
		return fmt.Sprintf("%.1f TiB", float64(n)/(1<<40))
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// Error says a run needs more memory than the machine has. It is the
// Err of a *cfgerr.Error whose key is the setting that contributes most.
type Error struct {
	Need, Have int64
	Source     string // where Have comes from: MemAvailable, a cgroup limit or a resource limit
	Part       string // the largest part of the estimate
}

// Error says how much is needed and how much is available.
func (e *Error) Error() string {
	return fmt.Sprintf("the run needs about %s (%s the largest part), more than the %s available (%s)",
		FormatBytes(e.Need), e.Part, FormatBytes(e.Have), e.Source)
}

// Check refuses an estimate above have bytes with a *cfgerr.Error
// naming the key that contributes most (train.batch_size for training
// activations, train.eval_batch_size for evaluation, data.prefetch, or the
// model's size) and wrapping an *Error. have <= 0 means unknown: no check.
func Check(e Estimate, have int64, source string) error {
	if have <= 0 || e.Peak <= have {
		return nil
	}
	key, part := "model.embed_dim", "parameters, gradients and optimizer state"
	best := e.Params + e.Grads + e.Optimizer + e.EMA + e.Save
	for _, c := range []struct {
		key, part string
		v         int64
	}{
		{"train.batch_size", "training activations", e.TrainAct},
		{"train.eval_batch_size", "evaluation activations", e.EvalAct},
		{"data.prefetch", "prefetch buffers", e.Prefetch},
		{"data.name", "the data set in memory", e.Data},
		{"distill.teacher", "the distillation teacher", e.Teacher},
		{"data.workers", "folder decodes in flight (data.workers × data.max_pixels at 4+3 bytes a pixel, at most the decode budget)", e.Decode},
	} {
		if c.v > best {
			key, part, best = c.key, c.part, c.v
		}
	}
	if e.Attention > best/2 && (key == "train.batch_size" || key == "train.eval_batch_size") {
		part += ", mostly attention over " + "tokens² (model.img_size / model.patch_size)"
	}
	return &cfgerr.Error{Key: key, Err: &Error{Need: e.Peak, Have: have, Source: source, Part: part}}
}

// Available returns the memory the machine has left for this process
// (meminfo.Available): the smaller of /proc/meminfo's MemAvailable and the
// cgroup's free memory, and where it comes from; 0 when unknown.
func Available() (int64, string) { return meminfo.Available() }

// CheckMachine checks e against Available: the check of a model's load
// (checkpoint, evaluate, classify), whose later allocations the decode
// budget bounds by every limit (meminfo.Free).
func CheckMachine(e Estimate) error {
	have, source := Available()
	return Check(e, have, source)
}

// CheckProcess checks e against every limit the process has
// (meminfo.Free): Available and what RLIMIT_AS (`ulimit -v`) and
// RLIMIT_DATA leave beyond the address space the process already holds.
// The trainer checks a run so, before it allocates its data set,
// activations and optimizer state up front.
func CheckProcess(e Estimate) error {
	have, source := meminfo.Free()
	return Check(e, have, source)
}
