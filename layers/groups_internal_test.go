package layers

import (
	"encoding/json"
	"os"
	"testing"
)

// layerIDs returns the layer id of every parameter of a ViT with depth
// blocks, by name, as params.go's rows give them.
func layerIDs(depth int) map[string]int {
	c := DefaultConfig()
	c.Depth = depth
	ids := map[string]int{}
	for _, p := range params(c) {
		ids[p.Name] = p.layerID
	}
	return ids
}

// TestLayerID uses a depth-12 ViT's names; ids follow timm's
// group_with_matcher over VisionTransformer.group_matcher.
func TestLayerID(t *testing.T) {
	ids := layerIDs(12)
	for _, tc := range []struct {
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
		{"head.weight", 13},
		{"head.bias", 13},
	} {
		if got, ok := ids[tc.name]; !ok || got != tc.want {
			t.Errorf("%s: layer id %d (present %v), want %d", tc.name, got, ok, tc.want)
		}
	}
	if len(ids) != 4+12*12+4 {
		t.Errorf("%d parameters, want %d", len(ids), 4+12*12+4)
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
	if len(g.Params) == 0 {
		t.Fatal("the golden lists no parameters")
	}
	ids := layerIDs(g.Depth)
	for _, p := range g.Params {
		if id, ok := ids[p.Name]; !ok || id != p.LayerID {
			t.Errorf("%s (depth %d): layer id %d (present %v), timm gives %d", p.Name, g.Depth, id, ok, p.LayerID)
		}
	}
}
