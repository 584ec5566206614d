package harness

import (
	"math"
	"testing"

	"github.com/vitgo/vit/layers"
)

// TestFlopsViTB16 compares the count with timm's published cost of
// vit_base_patch16_224: 17.6 GMACs (2 FLOPs per multiply-add).
func TestFlopsViTB16(t *testing.T) {
	f := ForwardFLOPs(layers.Presets["vit_base_patch16_224"])
	if gmacs := f.Total() / 2 / 1e9; math.Abs(gmacs-17.6) > 0.1 {
		t.Fatalf("vit_base_patch16_224: %.2f GMACs, timm says 17.6", gmacs)
	}
}

// TestQuadraticCrossover checks that the T² parts equal the per-token ones
// at T = (2 + mlp_ratio)·D.
func TestQuadraticCrossover(t *testing.T) {
	c := layers.DefaultConfig()
	c.EmbedDim, c.MLPRatio, c.Depth, c.PatchSize = 8, 4, 1, 1
	c.ImgSize = layers.Size2{1, 6*8 - 1} // T = 47 + 1 = 48 = 6·D
	f := ForwardFLOPs(c)
	quad := f["scores QKᵀ"] + f["weighted sum PV"]
	lin := f["qkv"] + f["attn proj"] + f["MLP"]
	if quad != lin {
		t.Fatalf("at T = 6·D: quadratic %v, linear %v", quad, lin)
	}
}
