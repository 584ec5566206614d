package layers

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/vitgo/vit/internal/cfgerr"
	"github.com/vitgo/vit/internal/enum"
	"github.com/vitgo/vit/internal/optional"
)

// Readout names how the classifier reads the token sequence.
type Readout string

// The readouts: the class token, or the mean of the patch tokens (timm's
// global_pool "token" and "avg" with fc_norm=False).
const (
	ReadoutCLS  Readout = "cls"
	ReadoutMean Readout = "mean"
)

// Validate reports whether r is a readout ("" = the default, cls).
func (r Readout) Validate() error {
	return enum.Check(r, ReadoutCLS, ReadoutMean)
}

// PatchEmbedForm names how patches are embedded. Both forms compute the same
// function with the same weight `patch_embed.proj.weight` [D, C, P, P].
type PatchEmbedForm string

// The patch embedding forms.
const (
	PatchLinear PatchEmbedForm = "linear" // unfold + Linear (fast)
	PatchConv   PatchEmbedForm = "conv"   // stride-P Conv2d (Gorgonia's im2col)
)

// Validate reports whether f is a patch embedding form ("" = linear).
func (f PatchEmbedForm) Validate() error {
	return enum.Check(f, PatchLinear, PatchConv)
}

// Act names the MLP activation.
type Act string

// The activations: exact GELU (erf, PyTorch's nn.GELU default) and its tanh
// approximation.
const (
	ActGELU     Act = "gelu"
	ActGELUTanh Act = "gelu_tanh"
)

// Validate reports whether a is an activation ("" = gelu).
func (a Act) Validate() error {
	return enum.Check(a, ActGELU, ActGELUTanh)
}

// Size2 is an image size, height × width. In YAML it is a single integer
// (square) or a two-element list [H, W].
type Size2 [2]int

// UnmarshalYAML accepts `28` or `[28, 42]`; a fractional value such as
// 28.5 is an error, not a truncation.
func (s *Size2) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		v, err := cfgerr.Int(n)
		if err != nil {
			return err
		}
		*s = Size2{v, v}
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
		return fmt.Errorf("want an integer or [height, width]")
	}
	for i, e := range n.Content {
		v, err := cfgerr.Int(e)
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		s[i] = v
	}
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
// pre-norm ViT. Field names follow timm's VisionTransformer arguments. The
// zero value is valid and means DefaultConfig; see WithDefaults for the
// rule, and the Max* constants for the bounds Validate enforces.
type Config struct {
	ImgSize      Size2          `yaml:"img_size"`       // input height × width; 0 = 224
	PatchSize    int            `yaml:"patch_size"`     // square patch side P; 0 = 16
	InChans      int            `yaml:"in_chans"`       // image channels; 0 = 3
	EmbedDim     int            `yaml:"embed_dim"`      // token width D; 0 = 768
	Depth        int            `yaml:"depth"`          // number of blocks L; 0 = 12
	NumHeads     int            `yaml:"num_heads"`      // attention heads; must divide D; 0 = 12
	MLPRatio     float64        `yaml:"mlp_ratio"`      // MLP hidden = int(D·ratio), truncated as timm does; 0 = 4
	NumClasses   int            `yaml:"num_classes"`    // classifier outputs; 0 = 1000
	Readout      Readout        `yaml:"readout"`        // cls (default) | mean
	DropPathRate float64        `yaml:"drop_path_rate"` // stochastic depth, rising linearly over blocks to this; default 0
	Dropout      float64        `yaml:"dropout"`        // after pos add, attn.proj, MLP act and fc2; default 0
	ZeroInitHead optional.Bool  `yaml:"zero_init_head"` // head weight and bias start at zero; default true
	QKVBias      optional.Bool  `yaml:"qkv_bias"`       // bias on the qkv projection; default true
	PatchEmbed   PatchEmbedForm `yaml:"patch_embed"`    // linear (default) | conv
	Act          Act            `yaml:"act"`            // gelu (default) | gelu_tanh
	LNEps        float64        `yaml:"ln_eps"`         // LayerNorm epsilon, in (0, 1]; 0 = 1e-6
	// Distilled builds DeiT's layout (timm's VisionTransformerDistilled): a
	// distillation token after the class token, a position table with both
	// prefix rows, and a second classifier head_dist on that token. An
	// evaluation graph returns the mean of the two heads. Default false
	// (omitted from a checkpoint's metadata when false).
	Distilled bool `yaml:"distilled,omitempty"`
}

// DefaultConfig is ViT-B/16 at 224 (timm's vit_base_patch16_224).
func DefaultConfig() Config {
	return Config{
		ImgSize: Size2{224, 224}, PatchSize: 16, InChans: 3, EmbedDim: 768, Depth: 12, NumHeads: 12,
		MLPRatio: 4, NumClasses: 1000, Readout: ReadoutCLS, ZeroInitHead: optional.BoolOf(true), QKVBias: optional.BoolOf(true),
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

// Bounds on the model keys. They are far above any ViT in the literature
// (ViT-22B: D 6144, depth 48, 48 heads) and exist so that a typo such as
// embed_dim 1e9 is an error naming the key, not an allocation the machine
// cannot make. The memory a configuration needs is checked separately
// (train.CheckMemory).
const (
	MaxImgSide    = 8192    // each side of img_size
	MaxTokens     = 1 << 16 // patches per image (img_size / patch_size)²
	MaxInChans    = 64
	MaxEmbedDim   = 16384
	MaxDepth      = 256
	MaxNumHeads   = 1024
	MaxMLPRatio   = 64
	MaxHidden     = 1 << 17 // embed_dim · mlp_ratio
	MaxNumClasses = 1 << 20
)

// WithDefaults returns c with every zero field replaced by its default (the
// values of DefaultConfig), so Config{} is ViT-B/16 and Config{Depth: 6} is
// a six-block ViT-B/16. ZeroInitHead and QKVBias, whose false is a setting,
// are optional: unset means true, optional.BoolOf(false) means false. The
// rates DropPathRate and Dropout default to 0 (off). The YAML parser reads a
// file over DefaultConfig and refuses an explicit zero for a key whose zero
// means the default (depth: 0).
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.ImgSize == (Size2{}) {
		c.ImgSize = d.ImgSize
	}
	setInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setInt(&c.PatchSize, d.PatchSize)
	setInt(&c.InChans, d.InChans)
	setInt(&c.EmbedDim, d.EmbedDim)
	setInt(&c.Depth, d.Depth)
	setInt(&c.NumHeads, d.NumHeads)
	setInt(&c.NumClasses, d.NumClasses)
	if c.MLPRatio == 0 {
		c.MLPRatio = d.MLPRatio
	}
	if c.LNEps == 0 {
		c.LNEps = d.LNEps
	}
	if c.Readout == "" {
		c.Readout = d.Readout
	}
	if c.PatchEmbed == "" {
		c.PatchEmbed = d.PatchEmbed
	}
	if c.Act == "" {
		c.Act = d.Act
	}
	c.ZeroInitHead = c.ZeroInitHead.Or(d.ZeroInitHead)
	c.QKVBias = c.QKVBias.Or(d.QKVBias)
	return c
}

// Grid is the patch grid (rows, columns).
func (c Config) Grid() (int, int) {
	c = c.WithDefaults()
	return c.ImgSize[0] / c.PatchSize, c.ImgSize[1] / c.PatchSize
}

// NumPrefixTokens is the number of tokens before the patch tokens (timm's
// num_prefix_tokens): the class token, and the distillation token when
// Distilled.
func (c Config) NumPrefixTokens() int {
	if c.Distilled {
		return 2
	}
	return 1
}

// NumTokens is the sequence length T: the prefix tokens and the patches.
func (c Config) NumTokens() int { return c.NumPrefixTokens() + c.NumPatches() }

// NumPatches is gh·gw, the number of patch tokens.
func (c Config) NumPatches() int { h, w := c.Grid(); return h * w }

// Hidden is the MLP hidden width, int(D·mlp_ratio) (truncated, as timm
// computes it).
func (c Config) Hidden() int {
	c = c.WithDefaults()
	if !(c.MLPRatio > 0 && c.MLPRatio <= MaxMLPRatio) {
		return 0
	}
	return int(float64(c.EmbedDim) * c.MLPRatio)
}

// Validate reports every invalid value, naming its key under "model." (as a
// *cfgerr.Error, train.ConfigError). Zero fields are valid: they mean the
// default (see WithDefaults).
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs cfgerr.List
	bad := func(key, format string, a ...any) { errs.Add("model."+key, format, a...) }
	intIn := func(key string, v, max int) bool {
		if v <= 0 || v > max {
			bad(key, "must be in [1, %d], got %d", max, v)
			return false
		}
		return true
	}
	okSize := intIn("img_size", c.ImgSize[0], MaxImgSide) && intIn("img_size", c.ImgSize[1], MaxImgSide)
	if c.PatchSize <= 0 {
		bad("patch_size", "must be positive, got %d", c.PatchSize)
	} else if okSize {
		switch {
		case c.PatchSize > min(c.ImgSize[0], c.ImgSize[1]):
			bad("patch_size", "%d is larger than img_size %v", c.PatchSize, c.ImgSize)
		case c.ImgSize[0]%c.PatchSize != 0 || c.ImgSize[1]%c.PatchSize != 0:
			bad("img_size", "%v is not divisible by patch_size %d", c.ImgSize, c.PatchSize)
		case c.NumPatches() > MaxTokens:
			bad("img_size", "%v with patch_size %d gives %d patches, more than %d", c.ImgSize, c.PatchSize, c.NumPatches(), MaxTokens)
		}
	}
	intIn("in_chans", c.InChans, MaxInChans)
	okDim := intIn("embed_dim", c.EmbedDim, MaxEmbedDim)
	intIn("depth", c.Depth, MaxDepth)
	okHeads := intIn("num_heads", c.NumHeads, MaxNumHeads)
	intIn("num_classes", c.NumClasses, MaxNumClasses)
	if okDim && okHeads && c.EmbedDim%c.NumHeads != 0 {
		bad("num_heads", "embed_dim %d is not divisible by num_heads %d", c.EmbedDim, c.NumHeads)
	}
	if !(c.MLPRatio > 0 && c.MLPRatio <= MaxMLPRatio) {
		bad("mlp_ratio", "must be in (0, %d], got %v", MaxMLPRatio, c.MLPRatio)
	} else if h := c.Hidden(); okDim && (h <= 0 || h > MaxHidden) {
		bad("mlp_ratio", "gives an MLP width of %d (embed_dim %d × %v), want 1 to %d", h, c.EmbedDim, c.MLPRatio, MaxHidden)
	}
	if err := c.Readout.Validate(); err != nil {
		bad("readout", "%w", err)
	} else if c.Distilled && c.Readout != ReadoutCLS {
		bad("readout", "a distilled model reads its class and distillation tokens: readout must be %q, got %q", ReadoutCLS, c.Readout)
	}
	if err := c.PatchEmbed.Validate(); err != nil {
		bad("patch_embed", "%w", err)
	}
	if err := c.Act.Validate(); err != nil {
		bad("act", "%w", err)
	}
	if !(c.DropPathRate >= 0 && c.DropPathRate < 1) {
		bad("drop_path_rate", "must be in [0, 1), got %v", c.DropPathRate)
	}
	if !(c.Dropout >= 0 && c.Dropout < 1) {
		bad("dropout", "must be in [0, 1), got %v", c.Dropout)
	}
	if !(c.LNEps > 0 && c.LNEps <= 1) {
		bad("ln_eps", "must be in (0, 1], got %v", c.LNEps)
	} else if !cfgerr.PositiveNormal32(c.LNEps) { // LayerNorm divides by √(var + ε) in float32
		bad("ln_eps", "must be normal in float32 (>= 1.2e-38, not 0 or subnormal once rounded), got %v", c.LNEps)
	}
	return errs.Err()
}

// ForwardFLOPs is the floating-point operations of one image's forward
// pass, two per multiply-add of the matrix products (patch embedding, qkv,
// attention scores and weighted values, projection, MLP, the heads); the
// element-wise work (LayerNorm, GELU, softmax, sums) is left out. A training
// step costs about three times it per image (forward and backward).
func (c Config) ForwardFLOPs() float64 {
	c = c.WithDefaults()
	f := func(x int) float64 { return float64(x) }
	T, D, hid := f(c.NumTokens()), f(c.EmbedDim), f(c.Hidden())
	embed := 2 * f(c.NumPatches()) * f(c.InChans*c.PatchSize*c.PatchSize) * D
	block := 2*T*D*3*D + 2*2*T*T*D + 2*T*D*D + 2*2*T*D*hid
	head := 2 * D * f(c.NumClasses) * f(c.NumPrefixTokens())
	return embed + f(c.Depth)*block + head
}
