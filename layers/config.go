package layers

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// Readout names how the classifier reads the token sequence.
type Readout string

// The readouts: the class token, or the mean of the patch tokens (timm's
// global_pool "token" and "avg" with fc_norm=False).
const (
	ReadoutCLS  Readout = "cls"
	ReadoutMean Readout = "mean"
)

// PatchEmbedForm names how patches are embedded. Both forms compute the same
// function with the same weight `patch_embed.proj.weight` [D, C, P, P].
type PatchEmbedForm string

// The patch embedding forms.
const (
	PatchLinear PatchEmbedForm = "linear" // unfold + Linear (fast)
	PatchConv   PatchEmbedForm = "conv"   // stride-P Conv2d (Gorgonia's im2col)
)

// Act names the MLP activation.
type Act string

// The activations: exact GELU (erf, PyTorch's nn.GELU default) and its tanh
// approximation.
const (
	ActGELU     Act = "gelu"
	ActGELUTanh Act = "gelu_tanh"
)

// Size2 is an image size, height × width. In YAML it is a single integer
// (square) or a two-element list [H, W].
type Size2 [2]int

// UnmarshalYAML accepts `28` or `[28, 42]`.
func (s *Size2) UnmarshalYAML(n *yaml.Node) error {
	var v int
	if err := n.Decode(&v); err == nil {
		*s = Size2{v, v}
		return nil
	}
	var l []int
	if err := n.Decode(&l); err != nil || len(l) != 2 {
		return fmt.Errorf("line %d: want an integer or [height, width]", n.Line)
	}
	*s = Size2{l[0], l[1]}
	return nil
}

// MarshalYAML writes a square size as one integer.
func (s Size2) MarshalYAML() (any, error) {
	if s[0] == s[1] {
		return s[0], nil
	}
	return []int{s[0], s[1]}, nil
}

// String formats the size as HxW.
func (s Size2) String() string { return fmt.Sprintf("%dx%d", s[0], s[1]) }

// Config is the model section of a run's YAML: the architecture of a
// pre-norm ViT. Field names follow timm's VisionTransformer arguments.
type Config struct {
	ImgSize      Size2          `yaml:"img_size"`       // input height × width; default 224
	PatchSize    int            `yaml:"patch_size"`     // square patch side P; default 16
	InChans      int            `yaml:"in_chans"`       // image channels; default 3
	EmbedDim     int            `yaml:"embed_dim"`      // token width D; default 768
	Depth        int            `yaml:"depth"`          // number of blocks L; default 12
	NumHeads     int            `yaml:"num_heads"`      // attention heads; must divide D; default 12
	MLPRatio     float64        `yaml:"mlp_ratio"`      // MLP hidden = round(D·ratio); default 4
	NumClasses   int            `yaml:"num_classes"`    // classifier outputs; default 1000
	Readout      Readout        `yaml:"readout"`        // cls (default) | mean
	DropPathRate float64        `yaml:"drop_path_rate"` // stochastic depth, rising linearly over blocks to this; default 0
	Dropout      float64        `yaml:"dropout"`        // after pos add, attn.proj, MLP act and fc2; default 0
	ZeroInitHead bool           `yaml:"zero_init_head"` // head weight and bias start at zero; default true
	QKVBias      bool           `yaml:"qkv_bias"`       // bias on the qkv projection; default true
	PatchEmbed   PatchEmbedForm `yaml:"patch_embed"`    // linear (default) | conv
	Act          Act            `yaml:"act"`            // gelu (default) | gelu_tanh
	LNEps        float64        `yaml:"ln_eps"`         // LayerNorm epsilon; default 1e-6
}

// DefaultConfig is ViT-B/16 at 224 (timm's vit_base_patch16_224).
func DefaultConfig() Config {
	return Config{
		ImgSize: Size2{224, 224}, PatchSize: 16, InChans: 3, EmbedDim: 768, Depth: 12, NumHeads: 12,
		MLPRatio: 4, NumClasses: 1000, Readout: ReadoutCLS, ZeroInitHead: true, QKVBias: true,
		PatchEmbed: PatchLinear, Act: ActGELU, LNEps: 1e-6,
	}
}

// Presets are the named ViT sizes (Dosovitskiy et al. 2021, Table 1, and
// Touvron et al. 2021 (DeiT) for Tiny/Small), at 224×224 with 1000 classes.
var Presets = map[string]Config{
	"vit_tiny_patch16_224":  preset(16, 192, 12, 3),   // DeiT-Ti
	"vit_small_patch16_224": preset(16, 384, 12, 6),   // DeiT-S
	"vit_base_patch16_224":  preset(16, 768, 12, 12),  // ViT-B/16, Table 1
	"vit_base_patch32_224":  preset(32, 768, 12, 12),  // ViT-B/32
	"vit_large_patch16_224": preset(16, 1024, 24, 16), // ViT-L/16, Table 1
	"vit_huge_patch14_224":  preset(14, 1280, 32, 16), // ViT-H/14, Table 1
}

func preset(p, d, depth, heads int) Config {
	c := DefaultConfig()
	c.PatchSize, c.EmbedDim, c.Depth, c.NumHeads = p, d, depth, heads
	return c
}

// Grid is the patch grid (rows, columns).
func (c Config) Grid() (int, int) { return c.ImgSize[0] / c.PatchSize, c.ImgSize[1] / c.PatchSize }

// NumPatches is gh·gw, the number of patch tokens.
func (c Config) NumPatches() int { h, w := c.Grid(); return h * w }

// Hidden is the MLP hidden width, int(D·mlp_ratio) as timm computes it.
func (c Config) Hidden() int { return int(float64(c.EmbedDim) * c.MLPRatio) }

// Validate reports every invalid value, naming its key under "model.".
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("model.%s: %s", key, fmt.Sprintf(format, a...)))
	}
	if c.ImgSize[0] <= 0 || c.ImgSize[1] <= 0 {
		bad("img_size", "must be positive, got %v", c.ImgSize)
	}
	if c.PatchSize <= 0 {
		bad("patch_size", "must be positive, got %d", c.PatchSize)
	} else if c.ImgSize[0] > 0 && c.ImgSize[1] > 0 && (c.ImgSize[0]%c.PatchSize != 0 || c.ImgSize[1]%c.PatchSize != 0) {
		bad("img_size", "%v is not divisible by patch_size %d", c.ImgSize, c.PatchSize)
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"in_chans", c.InChans}, {"embed_dim", c.EmbedDim}, {"depth", c.Depth}, {"num_heads", c.NumHeads}, {"num_classes", c.NumClasses}} {
		if f.v <= 0 {
			bad(f.key, "must be positive, got %d", f.v)
		}
	}
	if c.EmbedDim > 0 && c.NumHeads > 0 && c.EmbedDim%c.NumHeads != 0 {
		bad("num_heads", "embed_dim %d is not divisible by num_heads %d", c.EmbedDim, c.NumHeads)
	}
	if !(c.MLPRatio > 0) || c.Hidden() <= 0 {
		bad("mlp_ratio", "must give a positive hidden width, got %v", c.MLPRatio)
	}
	switch c.Readout {
	case ReadoutCLS, ReadoutMean:
	default:
		bad("readout", "must be %q or %q, got %q", ReadoutCLS, ReadoutMean, c.Readout)
	}
	switch c.PatchEmbed {
	case PatchLinear, PatchConv:
	default:
		bad("patch_embed", "must be %q or %q, got %q", PatchLinear, PatchConv, c.PatchEmbed)
	}
	switch c.Act {
	case ActGELU, ActGELUTanh:
	default:
		bad("act", "must be %q or %q, got %q", ActGELU, ActGELUTanh, c.Act)
	}
	if !(c.DropPathRate >= 0 && c.DropPathRate < 1) {
		bad("drop_path_rate", "must be in [0, 1), got %v", c.DropPathRate)
	}
	if !(c.Dropout >= 0 && c.Dropout < 1) {
		bad("dropout", "must be in [0, 1), got %v", c.Dropout)
	}
	if !(c.LNEps > 0) {
		bad("ln_eps", "must be positive, got %v", c.LNEps)
	}
	return errors.Join(errs...)
}
