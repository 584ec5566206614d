package layers

// The model's share of the memory estimate (package memest sums it with the
// data set's and the optimizer's): its parameters, and the activations its
// training and evaluation graphs keep, from the config alone. Activations
// are float32 and scale with the batch: per block each token row keeps its
// LayerNorm, qkv, attention, projection, MLP and residual outputs for the
// backward pass (the arena that graph.PlanBuffers shares between them); no
// graph keeps attention probabilities (batch·heads·tokens² values a block):
// the training graph recomputes them in the backward pass and the
// evaluation graph (BuildOptions.NoMaps) never stores them. The
// coefficients were fitted to graph.Arena.Bytes and heap profiles, and the
// total checked against peak RSS (train's TestEstimateMatchesMeasuredRSS).
// Values are float64, so that no product of bounded sizes overflows before
// the estimate compares it.

// Memory-model coefficients, in float32 values.
const (
	actPerRowD      = 8.7  // per block and token row, times embed_dim
	actPerRowHidden = 2.1  // per block and token row, times the MLP width
	actDropPath     = 1.65 // extra per block and row, times embed_dim, with drop path on
	actEmbed        = 2.0  // per row outside the blocks, times embed_dim
	ownedPerRow     = 2.5  // op-owned outputs (features, stats), times embed_dim, train and eval rows
	evalPerRow      = 2.0  // per extra eval row beyond the training batch, times the MLP width
)

// A bf16 training graph (train.precision) keeps the products' inputs
// as bfloat16 words and no GELU output; with train.recompute mlp, not
// mlp.fc1's output either (one block's at a time); with block, not the
// words of norm1, qkv and norm2 nor norm2's float32 input either (14·D
// bytes per row: 3.5·D values, of which one block's stay). Fitted to the
// planned arenas of ViT-S/16 and ViT-B/16 (docs/precision.md).
const (
	actPerRowDBF16            = 5.5
	actPerRowDBlock           = 2.0
	actPerRowHiddenBF16       = 1.05
	actPerRowHiddenRecomputed = 0.13
)

// ParamBytes is the memory of the float32 weights of a model of c, and of
// those of them that are trained (all but the names in frozen): its
// gradients take as much.
func ParamBytes(c Config, frozen map[string]bool) (all, trained float64) {
	n, t := paramCounts(c, frozen)
	return 4 * float64(n), 4 * float64(t)
}

// paramCounts is CountParams for a valid config, in int64, and the count
// of the parameters not in frozen.
func paramCounts(c Config, frozen map[string]bool) (all, trained int64) {
	for _, s := range ParamShapes(c) {
		k := int64(1)
		for _, d := range s.Shape {
			k *= int64(d)
		}
		all += k
		if !frozen[s.Name] {
			trained += k
		}
	}
	return all, trained
}

// ActivationOptions are what the activation estimate reads besides the
// model's config.
type ActivationOptions struct {
	// Training: a training graph at Batch rows (train.batch_size ÷
	// grad_accum_steps: it is built for one micro-batch) beside the
	// evaluation graph; false: the evaluation graph alone.
	Training bool
	Batch    float64
	// EvalBatch is the evaluation graph's batch.
	EvalBatch float64
	// Threads is the number of goroutines with (T, T) attention scratch.
	Threads float64
	// BF16 and Recompute are train.precision bf16 and train.recompute.
	BF16      bool
	Recompute Recompute
}

// ActivationBytes is the activation memory of a model's graphs.
type ActivationBytes struct {
	Train, Eval float64 // the training graph's, and what the evaluation graph adds
	Attention   float64 // of Train+Eval: the attention scratch
}

// Activations estimates the activations of a model of c's graphs.
func (c Config) Activations(o ActivationOptions) ActivationBytes {
	f := func(x int) float64 { return float64(x) }
	D, hid := f(c.EmbedDim), f(c.Hidden())
	T := f(c.NumTokens())
	depth := f(c.Depth)
	threads, B, Be := o.Threads, o.Batch, o.EvalBatch
	pixels := f(c.InChans) * f(c.ImgSize[0]) * f(c.ImgSize[1])
	var a ActivationBytes
	if o.Training {
		perD, perHid := actPerRowD, actPerRowHidden
		switch {
		case o.BF16 && c.Dropout > 0: // the MLP keeps fc1's and GELU's outputs in float32
			perD = actPerRowDBF16
		case o.BF16 && o.Recompute == RecomputeBlock:
			perD, perHid = actPerRowDBlock, actPerRowHiddenRecomputed
		case o.BF16 && o.Recompute == RecomputeMLP:
			perD, perHid = actPerRowDBF16, actPerRowHiddenRecomputed
		case o.BF16:
			perD, perHid = actPerRowDBF16, actPerRowHiddenBF16
		}
		perRow := depth*(perD*D+perHid*hid) + actEmbed*D
		if c.DropPathRate > 0 {
			perRow += depth * actDropPath * D
		}
		if c.Dropout > 0 {
			perRow += depth*(3*D+hid) + D
		}
		// The training graph keeps no attention probabilities: the backward
		// pass recomputes them (graph.Attention), in (T, T) scratch per goroutine.
		attn := 4 * 2 * T * T * threads
		a.Train = 4*B*T*(perRow+ownedPerRow*D) + attn + 4*B*pixels*2
		a.Attention = attn
	} else {
		B = 0
	}
	// The evaluation graph keeps no attention maps either
	// (BuildOptions.NoMaps): one block at a time holds K and V packed for
	// the whole batch, and each goroutine a (T, T) block of scores.
	evalAttn := 4 * (2*Be*T*D + threads*T*T)
	a.Eval = 4*Be*T*ownedPerRow*D + evalAttn + 4*Be*pixels*2 + 4*max(0, Be-B)*T*evalPerRow*hid
	if !o.Training {
		// Alone, the evaluation graph's arena holds a few rows of each width.
		a.Eval += 4 * Be * T * (4*D + 2*hid)
	}
	a.Attention += evalAttn
	return a
}

// FrozenBytes is the memory of a frozen copy of a model of c run forward
// at batch B (a distillation teacher): its weights, the packed copy of its
// Linear weights a Frozen graph reads (about all of them), its input at its
// own size, and the activations of a forward pass without maps planned into
// an arena of its own (evaluation alone's coefficients), with its (T, T)
// attention scratch per goroutine.
func (c Config) FrozenBytes(B, threads float64) float64 {
	n, _ := paramCounts(c, nil)
	P := float64(n)
	D, hid, T := float64(c.EmbedDim), float64(c.Hidden()), float64(c.NumTokens())
	pixels := float64(c.InChans) * float64(c.ImgSize[0]) * float64(c.ImgSize[1])
	act := 4*B*T*(ownedPerRow*D+4*D+2*hid) + 4*(2*B*T*D+threads*T*T)
	return 2*4*P + 4*B*pixels + act
}
