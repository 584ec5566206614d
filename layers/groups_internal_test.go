package layers

import (
	"encoding/json"
	"os"
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
		if got := layerID(tc.name, 12); got != tc.want {
			t.Errorf("layerID(%q, 12) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestLayerIDMatchesTimm compares the model's layer ids with those timm's
// param_groups_layer_decay gave the same names, recorded in optim's torch
// golden (experiments/goldens/optim_golden.py).
func TestLayerIDMatchesTimm(t *testing.T) {
	b, err := os.ReadFile("../optim/testdata/adamw_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Depth  int `json:"depth"`
		Params []struct {
			Name    string `json:"name"`
			LayerID int    `json:"layer_id"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Params {
		if id := layerID(p.Name, g.Depth); id != p.LayerID {
			t.Errorf("layerID(%q, %d) = %d, timm gives %d", p.Name, g.Depth, id, p.LayerID)
		}
	}
}
