package train

import (
	"math"
	"testing"

	"github.com/vitgo/vit/optim"
)

// TestStepUsesModelGroups checks that a Step hands the optimizer the
// parameter groups the model supplies (layers/groups.go): with weight decay
// 0.05 and layer decay 0.5, pos_embed is not decayed, and each tensor's lr
// scale follows its layer id (embeddings 0, blocks.i i+1, final norm depth,
// head depth+1).
func TestStepUsesModelGroups(t *testing.T) {
	m := tinyModel(t, nil)
	oc := optim.DefaultConfig()
	oc.LayerDecay = 0.5
	oc.WeightDecay.Set(0.05)
	s, err := NewStep(m, StepConfig{Batch: 2, Optim: oc, StepsPerEpoch: 1, TotalSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	depth := float64(m.Config.Depth)
	want := map[string]optim.Group{
		"pos_embed":                {WeightDecay: 0, LRScale: math.Pow(0.5, depth+1)},
		"patch_embed.proj.weight":  {WeightDecay: 0.05, LRScale: math.Pow(0.5, depth+1)},
		"blocks.0.attn.qkv.weight": {WeightDecay: 0.05, LRScale: math.Pow(0.5, depth)},
		"blocks.0.attn.qkv.bias":   {WeightDecay: 0, LRScale: math.Pow(0.5, depth)},
		"norm.weight":              {WeightDecay: 0, LRScale: 0.5},
		"head.weight":              {WeightDecay: 0.05, LRScale: 1},
	}
	found := 0
	for i, g := range s.opt.Groups(s.params) {
		name := s.params[i].Name
		w, ok := want[name]
		if !ok {
			continue
		}
		found++
		if g.WeightDecay != w.WeightDecay || math.Abs(g.LRScale-w.LRScale) > 1e-15 {
			t.Errorf("%s: %+v, want %+v", name, g, w)
		}
	}
	if found != len(want) {
		t.Errorf("found %d of the %d names", found, len(want))
	}
}
