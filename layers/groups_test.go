package layers_test

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/vitgo/vit/layers"
	"github.com/vitgo/vit/optim"
)

func groupsConfig(depth int) layers.Config {
	c := layers.DefaultConfig()
	c.ImgSize, c.PatchSize, c.InChans, c.EmbedDim, c.Depth, c.NumHeads, c.NumClasses = layers.Size2{4, 4}, 2, 1, 4, depth, 1, 3
	return c
}

// TestParamGroups checks the groups a model built by New hands to the
// optimizer: with weight decay 0.1 and layer decay 0.5 on a depth-2 ViT,
// each tensor's weight decay and lr scale, as AdamW applies them.
func TestParamGroups(t *testing.T) {
	c := groupsConfig(2)
	c.Distilled = true // DeiT's dist_token and head_dist join the stem and the head
	m, err := layers.New(c, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	oc := optim.DefaultConfig()
	oc.LayerDecay = 0.5
	oc.WeightDecay.Set(0.1)
	o, err := optim.NewAdamW(oc)
	if err != nil {
		t.Fatal(err)
	}
	params := make([]optim.Param, len(m.Params))
	for i, p := range m.Params {
		params[i] = optim.Param{Name: p.Name, Shape: p.Shape, NoDecay: p.NoWeightDecay, LayerID: p.LayerID}
	}
	want := map[string][2]float64{ // weight decay, lr scale
		"cls_token":                 {0, 0.125},
		"dist_token":                {0, 0.125},
		"head_dist.weight":          {0.1, 1},
		"head_dist.bias":            {0, 1},
		"pos_embed":                 {0, 0.125},
		"patch_embed.proj.weight":   {0.1, 0.125},
		"patch_embed.proj.bias":     {0, 0.125},
		"blocks.0.norm1.weight":     {0, 0.25},
		"blocks.0.attn.qkv.weight":  {0.1, 0.25},
		"blocks.0.attn.qkv.bias":    {0, 0.25},
		"blocks.0.mlp.fc2.weight":   {0.1, 0.25},
		"blocks.1.attn.proj.weight": {0.1, 0.5},
		"blocks.1.mlp.fc1.bias":     {0, 0.5},
		"norm.weight":               {0, 0.5},
		"norm.bias":                 {0, 0.5},
		"head.weight":               {0.1, 1},
		"head.bias":                 {0, 1},
	}
	groups := o.Groups(params)
	seen := 0
	for i, p := range params {
		w, ok := want[p.Name]
		if !ok {
			continue
		}
		seen++
		if g := groups[i]; g.WeightDecay != w[0] || math.Abs(g.LRScale-w[1]) > 1e-15 {
			t.Errorf("%s: weight decay %g, lr scale %g; want %g, %g", p.Name, g.WeightDecay, g.LRScale, w[0], w[1])
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d names", seen, len(want))
	}
}
