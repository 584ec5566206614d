package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"gorgonia.org/tensor"
)

// The ViT's parameters are described once, here: one row per tensor, with
// its name, shape, init scheme, optimizer groups and whether a serving
// graph packs it. ParamShapes, New, Init, the parameter groups (groups.go)
// and the Frozen graph's packed weights (frozen.go) all read these tables,
// as timm derives every name once from its module tree. Adding a parameter
// (a distillation token, LayerScale's gamma) is one row here plus its use in
// the forward pass (vit.go).

// paramSpec is one row: a parameter of the stem, of every block, or of the
// head.
type paramSpec struct {
	name  string     // state_dict key; in blockParams, the key under blocks.i.
	shape dims       // timm's shape, weights stored [out, in]
	init  initFn     // how Init fills it
	group layerGroup // its layer id for layer-wise lr decay (groups.go)
	flags paramFlags
}

// paramFlags are a row's yes/no properties.
type paramFlags uint8

const (
	noDecay   paramFlags = 1 << iota // in timm's no_weight_decay() (the optimizer exempts biases and 1-D tensors itself)
	packed                           // a Linear weight the Frozen graph reads packed (graph.PackWeight)
	qkvBias                          // present only when Config.QKVBias
	distilled                        // present only when Config.Distilled (DeiT)
	head                             // a classifier's: finetune.reset_head re-initialises it, finetune.linear_probe trains only these

	plain paramFlags = 0
)

// stemParams come before the blocks: class token, position table and patch
// embedding.
var stemParams = []paramSpec{
	{"cls_token", dims{one, one, embed}, initTruncNormal, groupEmbed, noDecay},
	{"pos_embed", dims{one, tokens, embed}, initTruncNormal, groupEmbed, noDecay},
	{"dist_token", dims{one, one, embed}, initTruncNormal, groupEmbed, noDecay | distilled},
	{"patch_embed.proj.weight", dims{embed, inChans, patch, patch}, initConv2dDefault, groupEmbed, packed},
	{"patch_embed.proj.bias", dims{embed}, initConv2dDefault, groupEmbed, plain},
}

// blockParams are one pre-norm block's, under blocks.i. for every block i.
var blockParams = []paramSpec{
	{"norm1.weight", dims{embed}, initOnes, groupBlock, plain},
	{"norm1.bias", dims{embed}, initZeros, groupBlock, plain},
	{"attn.qkv.weight", dims{embed3, embed}, initTruncNormal, groupBlock, packed},
	{"attn.qkv.bias", dims{embed3}, initZeros, groupBlock, qkvBias},
	{"attn.proj.weight", dims{embed, embed}, initTruncNormal, groupBlock, packed},
	{"attn.proj.bias", dims{embed}, initZeros, groupBlock, plain},
	{"norm2.weight", dims{embed}, initOnes, groupBlock, plain},
	{"norm2.bias", dims{embed}, initZeros, groupBlock, plain},
	{"mlp.fc1.weight", dims{hidden, embed}, initTruncNormal, groupBlock, packed},
	{"mlp.fc1.bias", dims{hidden}, initZeros, groupBlock, plain},
	{"mlp.fc2.weight", dims{embed, hidden}, initTruncNormal, groupBlock, packed},
	{"mlp.fc2.bias", dims{embed}, initZeros, groupBlock, plain},
}

// headParams come after the blocks: the final norm and the classifier.
var headParams = []paramSpec{
	{"norm.weight", dims{embed}, initOnes, groupFinalNorm, plain},
	{"norm.bias", dims{embed}, initZeros, groupFinalNorm, plain},
	{"head.weight", dims{classes, embed}, initHead, groupHead, packed | head},
	{"head.bias", dims{classes}, initZeros, groupHead, head},
	{"head_dist.weight", dims{classes, embed}, initHead, groupHead, packed | distilled | head},
	{"head_dist.bias", dims{classes}, initZeros, groupHead, distilled | head},
}

// IsHead reports whether name is a classification head's parameter (head,
// or a distilled model's head_dist): the rows flagged head. These are what
// finetune.reset_head re-initialises and what finetune.linear_probe trains.
func IsHead(name string) bool {
	for _, r := range headParams {
		if r.name == name {
			return r.flags&head != 0
		}
	}
	return false
}

// HeadPatterns are the head rows as path.Match globs over the dotted
// parameter names, one per head module in table order ("head.*",
// "head_dist.*"). A model without a distillation head has no parameter that
// the second matches.
func HeadPatterns() []string {
	var out []string
	for _, r := range headParams {
		if r.flags&head == 0 {
			continue
		}
		g := r.name[:strings.LastIndexByte(r.name, '.')+1] + "*"
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// dim is one symbolic size of a parameter's shape, read from the config.
type dim uint8

// dims is a parameter's symbolic shape.
type dims []dim

const (
	one     dim = iota // 1
	embed              // D
	embed3             // 3D (q, k and v)
	hidden             // MLP width, Config.Hidden
	tokens             // patches + prefix tokens (class, distillation)
	inChans            // image channels
	patch              // patch side P
	classes            // classifier outputs
)

func (d dim) size(c Config) int {
	switch d {
	case embed:
		return c.EmbedDim
	case embed3:
		return 3 * c.EmbedDim
	case hidden:
		return c.Hidden()
	case tokens:
		return c.NumTokens()
	case inChans:
		return c.InChans
	case patch:
		return c.PatchSize
	case classes:
		return c.NumClasses
	}
	return 1
}

func (ds dims) shape(c Config) tensor.Shape {
	s := make(tensor.Shape, len(ds))
	for i, d := range ds {
		s[i] = d.size(c)
	}
	return s
}

// param is a row resolved for one config (and, in a block, one index).
type param struct {
	NamedShape
	spec    *paramSpec
	layerID int
}

// params lists the parameters of a model with config c (defaults applied),
// in timm's state_dict order.
func params(c Config) []param {
	var out []param
	add := func(prefix string, rows []paramSpec, block int) {
		for i := range rows {
			r := &rows[i]
			if r.flags&qkvBias != 0 && !c.QKVBias.Value() || r.flags&distilled != 0 && !c.Distilled {
				continue
			}
			out = append(out, param{NamedShape{prefix + r.name, r.shape.shape(c)}, r, r.group.layerID(block, c.Depth)})
		}
	}
	add("", stemParams, 0)
	for i := 0; i < c.Depth; i++ {
		add(fmt.Sprintf("blocks.%d.", i), blockParams, i)
	}
	add("", headParams, 0)
	return out
}

// An initFn fills one parameter from its own random stream.
type initFn func(t *tensor.Dense, c Config, rng *rand.Rand)

// The init schemes of timm's init_weights_vit_timm.

// initTruncNormal is trunc_normal_(std=.02): Linear weights, pos_embed and
// cls_token.
func initTruncNormal(t *tensor.Dense, _ Config, rng *rand.Rand) { InitTruncNormal(t, 0.02, rng) }

// initZeros is zeros_: biases.
func initZeros(t *tensor.Dense, _ Config, _ *rand.Rand) { InitConst(t, 0) }

// initOnes is LayerNorm's weight, ones_.
func initOnes(t *tensor.Dense, _ Config, _ *rand.Rand) { InitConst(t, 1) }

// initConv2dDefault is PyTorch's Conv2d reset_parameters, which timm leaves
// on the patch projection: kaiming_uniform(a=√5) for the weight, U(±1/√fan_in),
// and the same bound for the bias.
func initConv2dDefault(t *tensor.Dense, c Config, rng *rand.Rand) {
	fanIn := c.InChans * c.PatchSize * c.PatchSize
	InitUniform(t, 1/math.Sqrt(float64(fanIn)), rng)
}

// initHead is a classifier weight (head, head_dist): zeros when Config.ZeroInitHead (as
// timm's init_weights_vit_jax does), else a Linear weight.
func initHead(t *tensor.Dense, c Config, rng *rand.Rand) {
	if c.ZeroInitHead.Value() {
		InitConst(t, 0)
		return
	}
	initTruncNormal(t, c, rng)
}
