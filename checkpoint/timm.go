package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"

	"github.com/vitgo/vit/checkpoint/safetensors"
	"github.com/vitgo/vit/internal/optional"
	"github.com/vitgo/vit/internal/regfile"
	"github.com/vitgo/vit/layers"
)

// HeadsError is TimmConfig's refusal to guess the attention heads: heads
// was 0 and the width is not a multiple of timm's 64 channels per head. The
// caller names the setting that supplies them.
type HeadsError struct {
	EmbedDim int
}

func (e *HeadsError) Error() string {
	return fmt.Sprintf("embed_dim %d is not a multiple of 64", e.EmbedDim)
}

// TimmConfig reads a ViT's or DeiT's architecture from the shapes of a timm
// state_dict (no metadata of ours): patch size, channels, width, depth, MLP
// width, classes, qkv bias, a square grid and whether it has a distillation
// token; GELU, LayerNorm eps 1e-6 and the class-token readout are timm's
// defaults. The shapes do not say the attention heads: heads gives them,
// and 0 means embed_dim/64, as in every timm ViT and DeiT preset (a width
// that is not a multiple of 64 is then a *HeadsError).
func TimmConfig(f *safetensors.File, heads int) (layers.Config, error) {
	shape := func(name string, rank int) ([]int, error) {
		t, ok := f.Get(name)
		if !ok || len(t.Shape) != rank {
			return nil, fmt.Errorf("no %s of rank %d: not a timm ViT or DeiT state_dict", name, rank)
		}
		return t.Shape, nil
	}
	c := layers.DefaultConfig()
	pw, err := shape("patch_embed.proj.weight", 4)
	if err != nil {
		return c, err
	}
	c.EmbedDim, c.InChans, c.PatchSize = pw[0], pw[1], pw[2]
	head, err := shape("head.weight", 2)
	if err != nil {
		return c, err
	}
	c.NumClasses = head[0]
	fc1, err := shape("blocks.0.mlp.fc1.weight", 2)
	if err != nil {
		return c, err
	}
	c.MLPRatio = float64(fc1[0]) / float64(c.EmbedDim)
	c.Depth = 0
	for {
		if _, ok := f.Get(fmt.Sprintf("blocks.%d.norm1.weight", c.Depth)); !ok {
			break
		}
		c.Depth++
	}
	_, c.Distilled = f.Get("dist_token")
	_, qkvBias := f.Get("blocks.0.attn.qkv.bias")
	c.QKVBias = optional.BoolOf(qkvBias)
	pos, err := shape("pos_embed", 3)
	if err != nil {
		return c, err
	}
	n := pos[1] - c.NumPrefixTokens()
	side := int(math.Sqrt(float64(n)))
	for side*side < n {
		side++
	}
	if side*side != n {
		return c, fmt.Errorf("pos_embed has %d patch rows, not a square grid", n)
	}
	c.ImgSize = layers.Size2{side * c.PatchSize, side * c.PatchSize}
	c.NumHeads = heads
	if heads == 0 {
		if c.EmbedDim%64 != 0 {
			return c, &HeadsError{EmbedDim: c.EmbedDim}
		}
		c.NumHeads = c.EmbedDim / 64
	}
	return c, nil
}

// FileSHA256 is the hex SHA-256 digest of a regular file (read through
// regfile: a FIFO or device is refused, not waited on). The digest of a
// model file as it is loaded is ReadModelSHA256's, from the one open.
func FileSHA256(path string) (string, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
