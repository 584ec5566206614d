package layers

import (
	"fmt"
	"math/rand/v2"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/vitgo/vit/graph"
	"github.com/vitgo/vit/internal/enum"
)

// Param is one named model parameter. Value holds the weights; every graph
// built from the model reads the same tensor, so an optimizer updating Value
// in place updates them all (nil once ReleaseFloatWeights has dropped it).
// NoWeightDecay and LayerID are its parameter groups for the optimizer (see
// groups.go). Its row in params.go says all of this once.
type Param struct {
	Name  string       // timm state_dict key, e.g. "blocks.0.attn.qkv.weight"
	Shape tensor.Shape // timm's shape, weights stored [out, in]
	Value *tensor.Dense

	NoWeightDecay bool // in timm's no_weight_decay() (pos_embed, cls_token, dist_token)
	LayerID       int  // layer id for layer-wise lr decay, 0 (embeddings) … depth+1 (head)

	spec *paramSpec // its row in params.go
}

// VisionTransformer holds a ViT's configuration and parameters.
type VisionTransformer struct {
	Config Config
	Params []*Param // in timm's state_dict order
	byName map[string]*Param

	frozenMu sync.Mutex
	frozen   map[graph.Precision]map[string]*graph.PackedWeight // Linear weights of Frozen graphs, per precision (frozen.go)
}

// New validates cfg and returns a model whose parameters, of dtype float32
// or float64, are initialised as timm does (see Init) from seed.
func New(cfg Config, dt tensor.Dtype, seed uint64) (*VisionTransformer, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("layers.New: dtype must be float32 or float64, got %v", dt)
	}
	m := &VisionTransformer{Config: cfg, byName: map[string]*Param{}}
	for _, s := range params(cfg) {
		p := &Param{Name: s.Name, Shape: s.Shape, Value: tensor.New(tensor.Of(dt), tensor.WithShape(s.Shape...)),
			NoWeightDecay: s.spec.flags&noDecay != 0, LayerID: s.layerID, spec: s.spec}
		m.Params = append(m.Params, p)
		m.byName[p.Name] = p
	}
	m.Init(seed)
	return m, nil
}

// NamedShape is a parameter name with its shape.
type NamedShape struct {
	Name  string
	Shape tensor.Shape
}

// ParamShapes lists the parameters of a model with this config, in timm's
// state_dict order, without allocating them.
func ParamShapes(c Config) []NamedShape {
	ps := params(c.WithDefaults())
	out := make([]NamedShape, len(ps))
	for i, p := range ps {
		out[i] = p.NamedShape
	}
	return out
}

// CountParams is the number of scalars in a model with this config.
func CountParams(c Config) int {
	n := 0
	for _, s := range ParamShapes(c) {
		n += s.Shape.TotalSize()
	}
	return n
}

// Param returns the parameter with this name, or nil.
func (m *VisionTransformer) Param(name string) *Param { return m.byName[name] }

// NumParams is the number of scalars in the model.
func (m *VisionTransformer) NumParams() int { return CountParams(m.Config) }

// Init re-initialises every parameter as timm's init_weights_vit_timm does,
// by the scheme of its row in params.go, each from its own stream of seed
// keyed by its name (so adding a layer does not change the others): Linear
// weights, pos_embed and cls_token trunc_normal(std .02, cut at ±2); biases
// 0; LayerNorm 1 and 0; the patch projection PyTorch's Conv2d default
// (kaiming_uniform(a=√5): U(±1/√fan_in), bias likewise); head weight and
// bias 0 when ZeroInitHead.
func (m *VisionTransformer) Init(seed uint64) {
	for _, p := range m.Params {
		if p.Value == nil { // released (ReleaseFloatWeights): a new tensor; Frozen graphs keep their snapshot
			p.Value = tensor.New(tensor.Of(m.Params[0].Value.Dtype()), tensor.WithShape(p.Shape...))
		}
		p.spec.init(p.Value, m.Config, rand.New(rand.NewPCG(seed, graph.StreamID(p.Name))))
	}
}

// InitTruncNormal fills t with N(0, std²) cut to [−2, 2] by resampling, as
// timm's trunc_normal_(std=std) (whose bounds a=−2, b=2 are absolute).
func InitTruncNormal(t *tensor.Dense, std float64, rng *rand.Rand) {
	fill(t, func() float64 {
		for {
			if v := rng.NormFloat64() * std; v >= -2 && v <= 2 {
				return v
			}
		}
	})
}

// InitUniform fills t with U(−bound, bound).
func InitUniform(t *tensor.Dense, bound float64, rng *rand.Rand) {
	fill(t, func() float64 { return (2*rng.Float64() - 1) * bound })
}

// InitConst fills t with v.
func InitConst(t *tensor.Dense, v float64) { fill(t, func() float64 { return v }) }

func fill(t *tensor.Dense, f func() float64) {
	switch d := t.Data().(type) {
	case []float32:
		for i := range d {
			d[i] = float32(f())
		}
	case []float64:
		for i := range d {
			d[i] = f()
		}
	}
}

// BuildOptions controls one graph built from a model.
type BuildOptions struct {
	Training bool   // dropout and drop path active
	Seed     uint64 // seeds their masks, with the step set in Graph.Stoch

	// Frozen builds a serving graph, for weights that no longer change: its
	// Linear layers read a packed copy of their weights (graph.LinearPacked)
	// and its attention keeps no maps (graph.AttentionEval). See frozen.go.
	// It excludes Training.
	Frozen bool

	// NoMaps builds an evaluation graph whose attention keeps no maps
	// (graph.AttentionEval): the (B, heads, T, T) probabilities of every
	// block are never stored, so the graph holds tokens-linear memory and
	// graph.AttentionProbs refuses its Attn nodes. It reads the live weights
	// (unlike Frozen) and excludes Training.
	NoMaps bool

	// DistilledTraining makes a distilled model's graph return its two heads
	// apart, Logits = head(class token) and DistLogits = head_dist
	// (distillation token), for a loss on each (timm's
	// set_distilled_training). Otherwise Logits is their mean, as timm's
	// VisionTransformerDistilled returns in evaluation and in training
	// without it.
	DistilledTraining bool

	// Precision is the arithmetic of every matrix product in the graph
	// (graph.Precision; "" = fp32): with bf16, each Linear (the patch
	// projection and the head included) and the attention's products take
	// bfloat16 operands and accumulate in float32, forward and backward,
	// while everything else stays float32 (see graph.Precision). It needs a
	// float32 model and the linear patch embedding. int8 (dynamic
	// quantization, graph.INT8) is for Frozen graphs only: their packed
	// Linear weights but the head's are quantized, and every other product
	// (attention's, a conv patch embedding's, the head) stays float32.
	Precision graph.Precision

	// Recompute names the activations a Training graph computes again in
	// the backward pass instead of keeping them between the passes
	// ("" = RecomputeNone). RecomputeMLP and RecomputeBlock need bf16 and
	// no dropout.
	Recompute Recompute
}

// Recompute names what a training graph recomputes in its backward pass.
type Recompute string

// The recompute choices. The zero value "" means RecomputeNone.
const (
	// RecomputeNone keeps every activation the backward pass reads.
	RecomputeNone Recompute = "none"
	// RecomputeMLP recomputes each block's mlp.fc1 output, the input of
	// its GELU, when the backward pass reaches the block's MLP
	// (graph.Recompute): one (B·T, hidden) float32 matrix is kept at a
	// time instead of one per block, for one more fc1 product per block.
	// Every bit of the step stays the same. It needs a bf16 graph without
	// dropout, whose MLP is a GELULinear.
	RecomputeMLP Recompute = "mlp"
	// RecomputeBlock also recomputes norm1's and norm2's outputs, attn.qkv's,
	// and norm2's float32 input x + attn.proj(attention): a block keeps,
	// between the passes, only its input x (float32) and attention's output
	// (bfloat16 words), 6·D bytes per token row instead of 20·D with
	// RecomputeMLP, for one more attn.qkv and attn.proj product, two
	// LayerNorms and a sum per block. With drop path the sum's branch is
	// kept instead of the sum. Every bit stays the same; it needs what
	// RecomputeMLP needs.
	RecomputeBlock Recompute = "block"
)

// Validate reports whether r is a recompute choice ("" = none).
func (r Recompute) Validate() error {
	return enum.Check(r, RecomputeNone, RecomputeMLP, RecomputeBlock)
}

// Active reports whether r recomputes anything (mlp or block).
func (r Recompute) Active() bool { return r == RecomputeMLP || r == RecomputeBlock }

// Check reports why r cannot train a model with dropout rate dropout in
// precision p (nil when it can): mlp and block recompute through the bf16
// graph's fused MLP (graph.GELULinear), which needs bf16 products and no
// dropout between fc1 and fc2. It assumes r is valid (Validate).
func (r Recompute) Check(p graph.Precision, dropout float64) error {
	switch {
	case !r.Active():
		return nil
	case !p.IsBF16():
		return fmt.Errorf("%s needs precision %s (got %s): it recomputes through the bf16 graph's fused MLP", r, graph.BF16, p.OrDefault())
	case dropout != 0:
		return fmt.Errorf("%s needs model.dropout 0 (got %g): a dropout between fc1 and fc2 keeps GELU's output", r, dropout)
	}
	return nil
}

// String returns r as written ("" for the unset default).
func (r Recompute) String() string { return string(r) }

// Graph is one forward graph of the model for a fixed batch size. Several
// graphs (training, evaluation) share the model's parameter tensors.
type Graph struct {
	G      *G.ExprGraph
	Batch  int
	Input  *G.Node // (B, C, H, W), bound to a tensor the caller fills
	Logits *G.Node // (B, num_classes); a distilled model's mean of its two heads, or with DistilledTraining its class head
	// DistLogits is a distilled model's head_dist output (B, num_classes)
	// in a DistilledTraining graph; nil otherwise.
	DistLogits *G.Node
	Features   *G.Node   // (B·T, D) token rows after the final norm, before readout (a Frozen graph with a class-token readout: the (B·K, D) rows of the K prefix tokens only)
	Params     []*G.Node // parallel to VisionTransformer.Params; in a Frozen graph nil for the weights it reads packed
	Attn       []*G.Node // per block, the attention core's output (graph.AttentionProbs reads its maps)
	Stoch      *graph.Stochastic
}

// Build makes the forward graph for batch images, from patch embedding to
// logits, reading the model's parameter tensors. The loss is the caller's.
func (m *VisionTransformer) Build(batch int, opts BuildOptions) (*Graph, error) {
	c := m.Config
	if batch <= 0 {
		return nil, fmt.Errorf("build: batch must be positive, got %d", batch)
	}
	if (opts.Frozen || opts.NoMaps) && opts.Training {
		return nil, fmt.Errorf("build: a Frozen or NoMaps graph cannot be a Training one")
	}
	if err := opts.Precision.Validate(); err != nil {
		return nil, fmt.Errorf("build: precision %w", err)
	}
	if opts.Precision.IsInt8() && !opts.Frozen {
		return nil, fmt.Errorf("build: precision %s is for inference: it needs a Frozen graph (its packed weights are quantized once)", opts.Precision)
	}
	if opts.Precision.IsBF16() && c.PatchEmbed == PatchConv {
		return nil, fmt.Errorf("build: precision %s needs model.patch_embed %q: the %q form is Gorgonia's convolution, which has no bfloat16 products", opts.Precision, PatchLinear, PatchConv)
	}
	if err := opts.Recompute.Validate(); err != nil {
		return nil, fmt.Errorf("build: recompute %w", err)
	}
	if opts.Recompute.Active() && !opts.Training {
		return nil, fmt.Errorf("build: recompute %q is for a Training graph (it has no backward pass)", opts.Recompute)
	}
	if err := opts.Recompute.Check(opts.Precision, c.Dropout); err != nil {
		return nil, fmt.Errorf("build: recompute %w", err)
	}
	var fz map[string]*graph.PackedWeight // Frozen: the weights read packed, which get no node
	var err error
	if opts.Frozen {
		if fz, err = m.frozenWeights(opts.Precision.OrDefault()); err != nil {
			return nil, err
		}
	}
	vals, err := m.buildValues(fz)
	if err != nil {
		return nil, err
	}
	dt := m.Params[0].Value.Dtype()
	g := G.NewGraph()
	out := &Graph{G: g, Batch: batch, Stoch: &graph.Stochastic{Training: opts.Training, Seed: opts.Seed}}
	in := tensor.New(tensor.Of(dt), tensor.WithShape(batch, c.InChans, c.ImgSize[0], c.ImgSize[1]))
	out.Input = G.NewTensor(g, dt, 4, G.WithValue(in), G.WithName("input"))
	p := map[string]*G.Node{}
	for i, pr := range m.Params {
		var n *G.Node
		if vals[i] != nil { // nil: read packed
			n = G.NewTensor(g, dt, pr.Shape.Dims(), G.WithShape(pr.Shape...), G.WithName(pr.Name), G.WithValue(vals[i]))
		}
		out.Params = append(out.Params, n)
		p[pr.Name] = n
	}
	b := &builder{cfg: c, p: p, batch: batch, tokens: c.NumTokens(), stoch: out.Stoch, noMaps: opts.NoMaps,
		splitHeads: c.Distilled && opts.DistilledTraining, prec: graph.WithPrecision(opts.Precision),
		recompute: opts.Recompute}
	if opts.Precision.IsInt8() {
		b.prec = graph.WithPrecision(graph.FP32) // int8 is the packed weights' alone
	}
	b.packed = fz
	logits, err := b.forward(out.Input, out)
	if err != nil {
		return nil, err
	}
	out.Logits = logits
	return out, nil
}

// builder carries what the forward pass needs while it adds nodes.
type builder struct {
	cfg           Config
	p             map[string]*G.Node
	packed        map[string]*graph.PackedWeight // Frozen: packed Linear weights, by the weight's name
	clsRows       bool                           // Frozen: x holds only the prefix-token rows (B·K, D) (frozen.go)
	noMaps        bool                           // attention without stored maps (BuildOptions.NoMaps)
	prec          graph.OpOption                 // the precision of every product (BuildOptions.Precision)
	splitHeads    bool                           // a distilled model's two heads apart (BuildOptions.DistilledTraining)
	recompute     Recompute                      // what the backward pass computes again (BuildOptions.Recompute)
	distLogits    *G.Node                        // head_dist's output, when splitHeads
	batch, tokens int
	stoch         *graph.Stochastic
	err           error
}

// do records the first error so the forward pass reads top to bottom. Every
// op below goes through op, which adds nothing once an error is recorded, so
// a failed constructor (a bad ln_eps, a shape mismatch) never hands a nil
// node to the next one.
func (b *builder) do(n *G.Node, err error) *G.Node {
	if err != nil && b.err == nil {
		b.err = err
	}
	if b.err != nil {
		return nil
	}
	return n
}

// op runs one op constructor unless an earlier one failed.
func (b *builder) op(f func() (*G.Node, error)) *G.Node {
	if b.err != nil {
		return nil
	}
	return b.do(f())
}

// forward: (B, C, H, W) images → (B, num_classes) logits, in timm's two
// halves.
func (b *builder) forward(img *G.Node, out *Graph) (*G.Node, error) {
	out.Features = b.forwardFeatures(img, out)
	x := b.forwardHead(out.Features)
	if b.err != nil {
		return nil, b.err
	}
	out.DistLogits = b.distLogits
	return x, nil
}

// forwardFeatures is timm's forward_features: (B, C, H, W) images → (B·T, D)
// token rows after the final norm (in a Frozen graph with a class-token
// readout, the (B, D) class-token rows only: see block). It appends each
// block's attention node to out.Attn.
func (b *builder) forwardFeatures(img *G.Node, out *Graph) *G.Node {
	c := b.cfg
	x := b.patchEmbed(img) // (B·N, D)
	prefix := []*G.Node{b.p["cls_token"]}
	if c.Distilled {
		prefix = append(prefix, b.p["dist_token"])
	}
	x = b.op(func() (*G.Node, error) { return graph.TokensPrefix(x, b.p["pos_embed"], b.batch, prefix...) }) // (B·T, D)
	x = b.dropout(x, "pos_drop")
	dpr := 0.0
	for i := 0; i < c.Depth && b.err == nil; i++ {
		if c.Depth > 1 {
			dpr = c.DropPathRate * float64(i) / float64(c.Depth-1) // linspace(0, rate, depth)
		}
		var attn *G.Node
		x, attn = b.block(x, i, dpr)
		out.Attn = append(out.Attn, attn)
	}
	return b.layerNorm(x, "norm")
}

// forwardHead is timm's forward_head: the readout (class token or mean of
// the patch tokens) and the classifier, features → (B, num_classes). A
// distilled model's is VisionTransformerDistilled's (see distilledHead).
func (b *builder) forwardHead(x *G.Node) *G.Node {
	if b.cfg.Distilled {
		return b.distilledHead(x)
	}
	if !b.clsRows {
		x = b.op(func() (*G.Node, error) { return graph.Readout(x, b.batch, b.cfg.Readout == ReadoutMean) }) // (B, D)
	}
	return b.linear(x, "head") // (B, classes)
}

// distilledHead is DeiT's head on the (B·T, D) features (a Frozen graph's:
// the (B·2, D) prefix rows): head on the class token (row 0), head_dist on
// the distillation token (row 1), and their mean (h + h_dist)/2, or with
// splitHeads the two apart (the class head returned, head_dist kept in
// b.distLogits).
func (b *builder) distilledHead(x *G.Node) *G.Node {
	cls := b.op(func() (*G.Node, error) { return graph.ReadoutRows(x, b.batch, 0, 1) })  // (B, D)
	dist := b.op(func() (*G.Node, error) { return graph.ReadoutRows(x, b.batch, 1, 1) }) // (B, D)
	h := b.linear(cls, "head")                                                           // (B, classes)
	hd := b.linear(dist, "head_dist")                                                    // (B, classes)
	if b.splitHeads {
		b.distLogits = hd
		return h
	}
	sum := b.op(func() (*G.Node, error) { return graph.Add(h, hd) })
	return b.op(func() (*G.Node, error) { return G.HadamardProd(sum, b.half(sum)) }) // (h + h_dist)/2: ×0.5 is exact
}

// half is a constant of 0.5s shaped like x, in its dtype.
func (b *builder) half(x *G.Node) *G.Node {
	t := tensor.New(tensor.Of(x.Dtype()), tensor.WithShape(x.Shape().Clone()...))
	InitConst(t, 0.5)
	return G.NewConstant(t, G.WithName("half"))
}

// linear applies the Linear layer whose parameters are name.weight and
// name.bias (nil when the model has none).
func (b *builder) linear(x *G.Node, name string, out ...graph.OpOption) *G.Node {
	if pw := b.packed[name+".weight"]; pw != nil {
		return b.op(func() (*G.Node, error) { return graph.LinearPacked(x, pw, b.p[name+".bias"]) })
	}
	opts := append([]graph.OpOption{b.prec}, out...)
	return b.op(func() (*G.Node, error) { return graph.Linear(x, b.p[name+".weight"], b.p[name+".bias"], opts...) })
}

// layerNorm applies the LayerNorm whose parameters are name.weight and
// name.bias; opts are the output's (productInput).
func (b *builder) layerNorm(x *G.Node, name string, opts ...graph.OpOption) *G.Node {
	return b.op(func() (*G.Node, error) {
		return graph.LayerNorm(x, b.p[name+".weight"], b.p[name+".bias"], b.cfg.LNEps, opts...)
	})
}

// again adds graph.Recompute to opts when the graph recomputes from level
// on (RecomputeMLP: fc1's output; RecomputeBlock: that, the LayerNorms',
// qkv's, attn.proj's and its residual sum's).
func (b *builder) again(from Recompute, opts []graph.OpOption) []graph.OpOption {
	if b.recompute == RecomputeBlock || (from == RecomputeMLP && b.recompute == RecomputeMLP) {
		return append(opts, graph.Recompute())
	}
	return opts
}

// productInput is the option of an activation that only a Linear's
// products read (when keep): in bf16, outside a Frozen graph (whose packed
// Linears take float32), it is kept as bfloat16 words (graph.StoreBF16),
// half the memory and the same bits.
func (b *builder) productInput(keep bool) []graph.OpOption {
	if !keep || b.packed != nil || !graph.PrecisionOf(b.prec).IsBF16() {
		return nil
	}
	return []graph.OpOption{graph.StoreBF16()}
}

// patchEmbed: (B, C, H, W) → (B·N, D).
func (b *builder) patchEmbed(img *G.Node) *G.Node {
	if pw := b.packed["patch_embed.proj.weight"]; pw != nil && b.cfg.PatchEmbed != PatchConv {
		return b.op(func() (*G.Node, error) {
			x, err := graph.Patchify(img, b.cfg.PatchSize)
			if err != nil {
				return nil, err
			}
			return graph.LinearPacked(x, pw, b.p["patch_embed.proj.bias"])
		})
	}
	return b.op(func() (*G.Node, error) {
		return PatchEmbed(b.cfg.PatchEmbed, img, b.p["patch_embed.proj.weight"], b.p["patch_embed.proj.bias"], b.cfg.PatchSize, b.prec)
	})
}

// PatchEmbed is the patch embedding on graph nodes, (B, C, H, W) images →
// (B·N, D) tokens, from the weight (D, C, P, P) and bias (D): Gorgonia's
// stride-P Conv2d with the channels moved last, or unfold + Linear. opts
// are the Linear's (graph.WithPrecision); the conv form refuses bf16.
func PatchEmbed(form PatchEmbedForm, img, w, bias *G.Node, patch int, opts ...graph.OpOption) (*G.Node, error) {
	if form == PatchConv {
		if p := graph.PrecisionOf(opts...); p.IsBF16() {
			return nil, fmt.Errorf("PatchEmbed: the %q form is Gorgonia's convolution, which has no %s products", PatchConv, p)
		}
		y, err := G.Conv2d(img, w, tensor.Shape{patch, patch}, []int{0, 0}, []int{patch, patch}, []int{1, 1}) // (B, D, gh, gw)
		if err != nil {
			return nil, err
		}
		if y, err = graph.ChannelsLast(y); err != nil { // (B·N, D)
			return nil, err
		}
		return G.BroadcastAdd(y, bias, nil, []byte{0})
	}
	x, err := graph.Patchify(img, patch) // (B·N, C·P·P)
	if err != nil {
		return nil, err
	}
	return graph.Linear(x, w, bias, opts...)
}

// block is one pre-norm transformer block on (B·T, D) rows:
//
//	x = x + drop_path(attn(norm1(x)))
//	x = x + drop_path(mlp(norm2(x)))
//
// It also returns the attention core's node. In a Frozen graph (b.packed
// set; never a training one, so no dropout or drop path) the Linear layers
// read packed weights and fuse what follows them (frozen.go): attn.proj and
// mlp.fc2 their residual sums, mlp.fc1 its GELU. With a class-token readout
// the last block of a Frozen graph computes only the class token's rows
// after its qkv (every token is still a key and a value): its attention
// output, attn.proj, norm2 and MLP are (B, D) instead of (B·T, D), and
// forwardHead skips the readout. Each class-token row gets the same
// arithmetic as in the full block (TestFrozenMatchesEval), for about 1/12
// less work on a 12-block ViT.
func (b *builder) block(x *G.Node, i int, dpr float64) (*G.Node, *G.Node) {
	c, pre := b.cfg, fmt.Sprintf("blocks.%d.", i)
	n := b.layerNorm(x, pre+"norm1", b.again(RecomputeBlock, b.productInput(true))...) // read by attn.qkv only
	// qkv (B·T, 3D) is read by graph.Attention's products only (not by the
	// eval forms, AttentionEval and AttentionEvalFirst, which take float32).
	h := b.linear(n, pre+"attn.qkv", b.again(RecomputeBlock, b.productInput(!b.noMaps))...)
	queries := b.tokens
	if b.packed != nil && i == c.Depth-1 && c.Readout != ReadoutMean {
		queries = c.NumPrefixTokens()
		x = b.op(func() (*G.Node, error) { return graph.ReadoutRows(x, b.batch, 0, queries) }) // prefix-token rows (B·K, D)
		b.clsRows = true
	}
	attn := b.attention(h, queries) // (B·queries, D)
	// With RecomputeBlock the sum x + attn.proj(attn), norm2's float32 input,
	// is computed again too: the block keeps only its input x and attn.
	x = b.linearResidual(attn, pre+"attn.proj", x, n, dpr, pre+"attn.proj_drop", pre+"drop_path1", b.again(RecomputeBlock, nil)...)

	n = b.layerNorm(x, pre+"norm2", b.again(RecomputeBlock, b.productInput(true))...) // read by mlp.fc1 only
	if b.productInput(b.cfg.Dropout == 0 || !b.stoch.Training) != nil {
		// bf16 with no dropout between: GELU and fc2 in one op, which keeps
		// no copy of the hidden activation (graph.GELULinear).
		h = b.linear(n, pre+"mlp.fc1", b.again(RecomputeMLP, nil)...) // (B·queries, hidden), before the GELU
		h = b.op(func() (*G.Node, error) {
			return graph.GELULinear(h, b.p[pre+"mlp.fc2.weight"], b.p[pre+"mlp.fc2.bias"], b.geluApprox(), b.prec)
		})
		h = b.dropout(h, pre+"mlp.drop2")
		return b.residual(x, n, h, dpr, pre+"drop_path2", nil), attn
	}
	h = b.linearAct(n, pre+"mlp.fc1") // (B·queries, hidden)
	h = b.dropout(h, pre+"mlp.drop1")
	x = b.linearResidual(h, pre+"mlp.fc2", x, n, dpr, pre+"mlp.drop2", pre+"drop_path2") // (B·queries, D)
	return x, attn
}

// attention is the multi-head attention core on the (B·T, 3D) qkv rows,
// for the first queries tokens of each image (all but in a Frozen graph's
// last block): graph.Attention, which keeps the maps, or without them
// graph.AttentionEval (NoMaps) and graph.AttentionEvalFirst (Frozen).
func (b *builder) attention(qkv *G.Node, queries int) *G.Node {
	heads := b.cfg.NumHeads
	switch {
	case b.packed != nil:
		return b.op(func() (*G.Node, error) {
			return graph.AttentionEvalFirst(qkv, b.batch, b.tokens, heads, queries, b.prec)
		})
	case b.noMaps:
		return b.op(func() (*G.Node, error) { return graph.AttentionEval(qkv, b.batch, b.tokens, heads, b.prec) })
	}
	opts := append([]graph.OpOption{b.prec}, b.productInput(true)...) // read by attn.proj only
	return b.op(func() (*G.Node, error) { return graph.Attention(qkv, b.batch, b.tokens, heads, opts...) })
}

// linearResidual returns x + drop_path(dropout(Linear name (h))), the
// residual branch that starts at norm = LayerNorm(x) (see residual); in a
// Frozen graph, the Linear with the sum fused (graph.LinearPackedAdd).
func (b *builder) linearResidual(h *G.Node, name string, x, norm *G.Node, dpr float64, drop, dropPath string, again ...graph.OpOption) *G.Node {
	if pw := b.packed[name+".weight"]; pw != nil {
		return b.op(func() (*G.Node, error) { return graph.LinearPackedAdd(h, pw, b.p[name+".bias"], x) })
	}
	h = b.linear(h, name, again...)
	h = b.dropout(h, drop)
	return b.residual(x, norm, h, dpr, dropPath, again)
}

// linearAct returns the MLP activation of Linear name (x); in a Frozen
// graph, the Linear with the GELU fused (graph.LinearPackedGELU).
func (b *builder) linearAct(x *G.Node, name string) *G.Node {
	if pw := b.packed[name+".weight"]; pw != nil {
		return b.op(func() (*G.Node, error) { return graph.LinearPackedGELU(x, pw, b.p[name+".bias"], b.geluApprox()) })
	}
	h := b.linear(x, name)
	return b.op(func() (*G.Node, error) { return graph.GELU(h, b.geluApprox()) })
}

// geluApprox is the GELU form of Config.Act.
func (b *builder) geluApprox() graph.GELUApprox {
	if b.cfg.Act == ActGELUTanh {
		return graph.GELUTanh
	}
	return graph.GELUExact
}

// residual returns x + drop_path(h), h being the branch that starts at
// norm = LayerNorm(x): graph.Residual, whose gradient at the fork is summed
// inside the LayerNorm's backward kernel.
func (b *builder) residual(x, norm, h *G.Node, rate float64, name string, opts []graph.OpOption) *G.Node {
	if rate > 0 && b.stoch.Training {
		h = b.op(func() (*G.Node, error) { return graph.DropPath(h, rate, b.batch, b.stoch, graph.StreamID(name)) })
	}
	return b.op(func() (*G.Node, error) { return graph.Residual(x, norm, h, opts...) })
}

func (b *builder) dropout(h *G.Node, name string) *G.Node {
	if b.cfg.Dropout == 0 || !b.stoch.Training {
		return h
	}
	return b.op(func() (*G.Node, error) { return graph.Dropout(h, b.cfg.Dropout, b.stoch, graph.StreamID(name)) })
}
