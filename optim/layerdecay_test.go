package optim

import (
	"math"
	"testing"
)

// TestLayerID uses a depth-12 ViT's names; ids follow timm's
// group_with_matcher over VisionTransformer.group_matcher.
func TestLayerID(t *testing.T) {
	tests := []struct {
		name string
		want int
	}{
		{"cls_token", 0},
		{"pos_embed", 0},
		{"patch_embed.proj.weight", 0},
		{"patch_embed.proj.bias", 0},
		{"blocks.0.norm1.weight", 1},
		{"blocks.3.attn.qkv.weight", 4},
		{"blocks.11.mlp.fc2.bias", 12},
		{"norm.weight", 12}, // r'^norm' joins the last block (MATCH_PREV_GROUP)
		{"norm.bias", 12},
		{"fc_norm.weight", 13},
		{"head.weight", 13},
		{"head.bias", 13},
		{"blocks.x.weight", 13}, // no digits: unmatched, like timm
	}
	for _, tc := range tests {
		if got := LayerID(tc.name, 12); got != tc.want {
			t.Errorf("LayerID(%q, 12) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestLayerScale(t *testing.T) {
	tests := []struct {
		name  string
		decay float64
		want  float64
	}{
		{"head.weight", 0.75, 1},
		{"norm.weight", 0.75, 0.75},
		{"blocks.11.attn.qkv.weight", 0.75, 0.75},
		{"blocks.3.attn.qkv.weight", 0.75, math.Pow(0.75, 9)},
		{"pos_embed", 0.75, math.Pow(0.75, 13)},
		{"pos_embed", 0, 1},
		{"pos_embed", 1, 1},
	}
	for _, tc := range tests {
		if got := LayerScale(tc.name, 12, tc.decay); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("LayerScale(%q, 12, %g) = %.17g, want %.17g", tc.name, tc.decay, got, tc.want)
		}
	}
}
