// Package memory estimates from a config alone (nothing is allocated) the
// memory that training or evaluating a ViT needs, and refuses one that does
// not fit the machine with an error naming the config key that contributes
// most. The trainer (train), the evaluator's checkpoint loading (checkpoint,
// evaluate) and the dry run share it.
package memory

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"text/tabwriter"

	"github.com/vitgo/vit/data"
	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/meminfo"
	"github.com/vitgo/vit/layers"
)

// Estimate is the memory a run needs, by part, in bytes, computed from
// the config alone (nothing is allocated). Activations are float32 and scale
// with the batch: per block each token row keeps its LayerNorm, qkv,
// attention, projection, MLP and residual outputs for the backward pass (the
// arena that graph.PlanBuffers shares between them); no graph keeps attention
// probabilities (batch·heads·tokens² values a block): the training graph
// recomputes them in the backward pass and the evaluation graph
// (layers.BuildOptions.NoMaps) never stores them. The coefficients were
// fitted to graph.Arena.Bytes and heap profiles, and the total checked
// against peak RSS (TestEstimateMatchesMeasuredRSS; README "What the trainer
// refuses, and why").
type Estimate struct {
	Params    int64 // the weights
	Grads     int64 // one gradient per weight
	Optimizer int64 // AdamW's two moments
	EMA       int64 // the EMA copy of the weights (optim.ema)
	TrainAct  int64 // training graph activations at train.batch_size (÷ grad_accum_steps), attention included
	EvalAct   int64 // what the evaluation graph at train.eval_batch_size adds
	Attention int64 // of TrainAct+EvalAct: attention scratch ((T, T) scores per goroutine, K/V packs); no stored maps
	Data      int64 // the data set held in memory (MNIST, Fashion-MNIST, CIFAR-10)
	Prefetch  int64 // batches in flight in the training and evaluation loaders
	Decode    int64 // a folder data set's decodes in flight: data.workers images at the decoded-bytes limit, at most the decode budget
	Save      int64 // transient while a checkpoint is written: the copies of the AdamW moments and EMA
	Teacher   int64 // distillation's frozen teacher: weights, their packed copy, its input and activations at the micro-batch
	Runtime   int64 // Go runtime, code and goroutine stacks
	Peak      int64 // the sum: what the process's RSS is expected to reach
}

// Memory-model coefficients, in float32 values (see Estimate).
const (
	actPerRowD      = 8.7  // per block and token row, times embed_dim
	actPerRowHidden = 2.1  // per block and token row, times the MLP width
	actDropPath     = 1.65 // extra per block and row, times embed_dim, with drop path on
	actEmbed        = 2.0  // per row outside the blocks, times embed_dim
	ownedPerRow     = 2.5  // op-owned outputs (features, stats), times embed_dim, train and eval rows
	evalPerRow      = 2.0  // per extra eval row beyond the training batch, times the MLP width
	runtimeBytes    = 24 << 20
)

// A bf16 training graph (train.precision) keeps the products' inputs
// as bfloat16 words and no GELU output; with train.recompute mlp, not
// mlp.fc1's output either (one block's at a time); with block, not the
// words of norm1, qkv and norm2 nor norm2's float32 input either (14·D
// bytes per row: 3.5·D values, of which one block's stay). Fitted to the
// planned arenas of ViT-S/16 and ViT-B/16 (1080 and 1071 MiB; 674 and
// 665 MiB with mlp; 314 and 305 MiB with block; docs/precision.md).
const (
	actPerRowDBF16            = 5.5
	actPerRowDBlock           = 2.0
	actPerRowHiddenBF16       = 1.05
	actPerRowHiddenRecomputed = 0.13
)

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
	// Teacher is distill.teacher's architecture when training with a
	// teacher (distill.type hard or soft); nil otherwise.
	Teacher *layers.Config
	// BF16 is train.precision bf16, and Recompute train.recompute
	// (training only).
	BF16      bool
	Recompute layers.Recompute
	// Frozen holds the names of the parameters that are not trained
	// (finetune.freeze, finetune.linear_probe): they get no gradient and
	// no AdamW moments.
	Frozen map[string]bool
}

// Of estimates the memory of s: of training (s.Training) or of evaluating a
// model of s.Model at s.EvalBatch on s.Data.
func Of(s Spec) Estimate {
	m, training := s.Model, s.Training
	f := func(x int) float64 { return float64(x) }
	P := float64(paramCount(m))
	D, hid := f(m.EmbedDim), f(m.Hidden())
	T := f(m.NumTokens())
	depth := f(m.Depth)
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
	var e estimateF
	e.params = 4 * P
	if training {
		Ptrain := float64(trainedCount(m, s.Frozen))
		e.grads = 4 * Ptrain
		e.optimizer = 8 * Ptrain
		if s.EMA {
			e.ema = 4 * P
		}
		perD, perHid := actPerRowD, actPerRowHidden
		switch {
		case s.BF16 && m.Dropout > 0: // the MLP keeps fc1's and GELU's outputs in float32
			perD = actPerRowDBF16
		case s.BF16 && s.Recompute == layers.RecomputeBlock:
			perD, perHid = actPerRowDBlock, actPerRowHiddenRecomputed
		case s.BF16 && s.Recompute == layers.RecomputeMLP:
			perD, perHid = actPerRowDBF16, actPerRowHiddenRecomputed
		case s.BF16:
			perD, perHid = actPerRowDBF16, actPerRowHiddenBF16
		}
		perRow := depth*(perD*D+perHid*hid) + actEmbed*D
		if m.DropPathRate > 0 {
			perRow += depth * actDropPath * D
		}
		if m.Dropout > 0 {
			perRow += depth*(3*D+hid) + D
		}
		// The training graph keeps no attention probabilities: the backward
		// pass recomputes them (graph.Attention), in (T, T) scratch per goroutine.
		attn := 4 * 2 * T * T * threads
		e.trainAct = 4*B*T*(perRow+ownedPerRow*D) + attn + 4*B*pixels*2
		e.attention = attn
		// While a checkpoint is written, the AdamW moments and the EMA are
		// copied out (optim State, EMA Weights); the files' tensors are
		// views of those copies and of the live weights (safetensors.Float32View).
		e.save = e.optimizer + e.ema
		e.prefetch = 4 * batch * (pixels + f(m.NumClasses)) * f(s.Data.Prefetch+2)
		if tc := s.Teacher; tc != nil {
			e.teacher = teacherBytes(*tc, B, threads)
		}
	} else {
		B = 0
	}
	// The evaluation graph keeps no attention maps either
	// (layers.BuildOptions.NoMaps): one block at a time holds K and V packed
	// for the whole batch, and each goroutine a (T, T) block of scores.
	evalAttn := 4 * (2*Be*T*D + threads*T*T)
	e.evalAct = 4*Be*T*ownedPerRow*D + evalAttn + 4*Be*pixels*2 + 4*math.Max(0, Be-B)*T*evalPerRow*hid
	if !training {
		// Alone, the evaluation graph's arena holds a few rows of each width.
		e.evalAct += 4 * Be * T * (4*D + 2*hid)
	}
	e.attention += evalAttn
	e.prefetch += 4 * Be * (pixels + f(m.NumClasses)) * f(s.Data.Prefetch+2)
	e.data = datasetBytes(s.Data)
	e.decode = decodeBytes(s.Data)
	e.runtime = runtimeBytes
	return e.int()
}

// teacherBytes is a frozen teacher's memory at batch B: its weights, the
// packed copy of its Linear weights a Frozen graph reads (about all of
// them), its input at its own size, and the activations of a forward pass
// without maps planned into an arena of its own (evaluation alone's
// coefficients), with its (T, T) attention scratch per goroutine.
func teacherBytes(c layers.Config, B, threads float64) float64 {
	P := float64(paramCount(c))
	D, hid, T := float64(c.EmbedDim), float64(c.Hidden()), float64(c.NumTokens())
	pixels := float64(c.InChans) * float64(c.ImgSize[0]) * float64(c.ImgSize[1])
	act := 4*B*T*(ownedPerRow*D+4*D+2*hid) + 4*(2*B*T*D+threads*T*T)
	return 2*4*P + 4*B*pixels + act
}

// estimateF is Estimate in float64, so that no product of bounded
// sizes can overflow before it is compared.
type estimateF struct {
	params, grads, optimizer, ema, trainAct, evalAct, attention, data, prefetch, decode, save, teacher, runtime float64
}

func (e estimateF) int() Estimate {
	sat := func(x float64) int64 {
		if !(x < math.MaxInt64/2) {
			return math.MaxInt64 / 2
		}
		return int64(x)
	}
	// A checkpoint is encoded while the activations are still allocated, so
	// its transient copy adds to the steady state.
	peak := e.params + e.grads + e.optimizer + e.ema + e.trainAct + e.evalAct + e.data + e.prefetch + e.decode + e.runtime + e.save + e.teacher
	return Estimate{
		Params: sat(e.params), Grads: sat(e.grads), Optimizer: sat(e.optimizer), EMA: sat(e.ema),
		TrainAct: sat(e.trainAct), EvalAct: sat(e.evalAct), Attention: sat(e.attention),
		Data: sat(e.data), Prefetch: sat(e.prefetch), Decode: sat(e.decode), Save: sat(e.save), Teacher: sat(e.teacher), Runtime: sat(e.runtime), Peak: sat(peak),
	}
}

// paramCount is layers.CountParams for a valid config.
func paramCount(c layers.Config) int64 {
	var n int64
	for _, s := range layers.ParamShapes(c) {
		k := int64(1)
		for _, d := range s.Shape {
			k *= int64(d)
		}
		n += k
	}
	return n
}

// trainedCount is the number of trained scalars of a model of c: its
// parameters less the frozen ones.
func trainedCount(c layers.Config, frozen map[string]bool) int64 {
	var n int64
	for _, s := range layers.ParamShapes(c) {
		if frozen[s.Name] {
			continue
		}
		k := int64(1)
		for _, d := range s.Shape {
			k *= int64(d)
		}
		n += k
	}
	return n
}

// datasetBytes is the memory of the data sets that are loaded whole: both
// splits, one byte per pixel. Folders are decoded lazily.
func datasetBytes(c data.Config) float64 {
	switch c.Name {
	case data.NameMNIST, data.NameFashionMNIST:
		return 70000 * (28*28 + 8)
	case data.NameCIFAR10:
		return 60000 * (32*32*3 + 8)
	}
	return 0
}

// decodeBytes bounds the memory of a folder data set's decodes in flight:
// each of data.workers decodes may hold an image at the decoded-bytes limit
// (data.Header.Cost: the decoded image and its CHW copy), and all of them
// together at most the shared decode budget they wait on (data.SharedBudget).
func decodeBytes(c data.Config) float64 {
	if c.Name != data.NameFolder {
		return 0
	}
	workers := c.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	px := int64(c.MaxPixels)
	if px <= 0 {
		px = data.DefaultMaxPixels
	}
	perImage := float64(data.MaxDecodedBytes(px) + 3*px)
	return math.Min(float64(workers)*perImage, float64(data.SharedBudget().Total()))
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

// Available returns the memory this process may still use by every limit
// it has (meminfo.Free): the smallest of /proc/meminfo's MemAvailable, the
// cgroup's free memory and what RLIMIT_AS (`ulimit -v`) and RLIMIT_DATA
// leave, and where it comes from; 0 when unknown.
func Available() (int64, string) { return meminfo.Free() }

// CheckMachine checks e against Available.
func CheckMachine(e Estimate) error {
	have, source := Available()
	return Check(e, have, source)
}
