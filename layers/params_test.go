package layers

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// TestParamRows checks the rows of params.go against what they stand for
// in timm, by name: the packed weights are the Linear weights (every 2-D
// .weight, and the patch projection, a Linear on unfolded patches); only
// cls_token and pos_embed are in no_weight_decay().
func TestParamRows(t *testing.T) {
	c := tinyConfig().WithDefaults()
	for _, p := range params(c) {
		linear := p.Name == "patch_embed.proj.weight" || (strings.HasSuffix(p.Name, ".weight") && len(p.Shape) == 2)
		if got := p.spec.flags&packed != 0; got != linear {
			t.Errorf("%s: packed %v, want %v", p.Name, got, linear)
		}
		nwd := p.Name == "cls_token" || p.Name == "pos_embed"
		if got := p.spec.flags&noDecay != 0; got != nwd {
			t.Errorf("%s: no weight decay %v, want %v", p.Name, got, nwd)
		}
	}
}

// TestInitSchemes checks every parameter New initialises against timm's
// init_weights_vit_timm, by name: LayerNorm weights 1; biases 0 (the patch
// projection's U(±1/√fan_in)); Linear weights, cls_token and pos_embed
// trunc_normal(.02), cut at ±2; the head 0 with ZeroInitHead.
func TestInitSchemes(t *testing.T) {
	for _, zeroHead := range []bool{false, true} {
		c := tinyConfig()
		c.EmbedDim, c.NumHeads, c.NumClasses = 64, 4, 50 // enough draws for a std
		c.ZeroInitHead.Set(zeroHead)
		m, err := New(c, tensor.Float64, 3)
		if err != nil {
			t.Fatal(err)
		}
		bound := 1 / math.Sqrt(float64(c.InChans*c.PatchSize*c.PatchSize))
		for _, p := range m.Params {
			v := p.Value.Data().([]float64)
			var sum, sq, maxAbs float64
			for _, x := range v {
				sum, sq, maxAbs = sum+x, sq+x*x, max(maxAbs, math.Abs(x))
			}
			std := math.Sqrt(sq / float64(len(v)))
			n := p.Name
			switch {
			case strings.HasPrefix(n, "patch_embed.proj."):
				if maxAbs > bound || maxAbs == 0 {
					t.Errorf("%s: max |v| %g, want in (0, %g]", n, maxAbs, bound)
				}
			case strings.HasPrefix(n, "head.") && zeroHead, strings.HasSuffix(n, ".bias") && !strings.Contains(n, "norm"):
				if maxAbs != 0 {
					t.Errorf("%s: max |v| %g, want zeros", n, maxAbs)
				}
			case strings.HasSuffix(n, "norm.weight") || strings.HasSuffix(n, "norm1.weight") || strings.HasSuffix(n, "norm2.weight"):
				if sum != float64(len(v)) || sq != float64(len(v)) {
					t.Errorf("%s: not all ones", n)
				}
			case strings.HasSuffix(n, ".bias"):
				if maxAbs != 0 {
					t.Errorf("%s: max |v| %g, want zeros", n, maxAbs)
				}
			default: // trunc_normal(.02)
				if len(v) >= 64 && (std < 0.015 || std > 0.025) {
					t.Errorf("%s: std %g, want about 0.02", n, std)
				}
				if maxAbs > 2 || maxAbs == 0 {
					t.Errorf("%s: max |v| %g, want in (0, 2]", n, maxAbs)
				}
			}
		}
	}
}

// TestHeadFlag checks the head flag of the parameter table: exactly the
// classifiers' tensors (head, and head_dist in a distilled model) are heads,
// and their globs are the ones finetune.linear_probe names in its refusals.
func TestHeadFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"head.weight", true},
		{"head.bias", true},
		{"head_dist.weight", true},
		{"head_dist.bias", true},
		{"norm.weight", false},
		{"norm.bias", false},
		{"dist_token", false},
		{"cls_token", false},
		{"blocks.0.mlp.fc2.weight", false},
		{"head", false},
		{"head.weight.extra", false},
	} {
		if got := IsHead(tc.name); got != tc.want {
			t.Errorf("IsHead(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	c := tinyConfig()
	c.Distilled = true
	var heads []string
	for _, p := range params(c.WithDefaults()) {
		if IsHead(p.Name) {
			heads = append(heads, p.Name)
		}
	}
	if want := []string{"head.weight", "head.bias", "head_dist.weight", "head_dist.bias"}; strings.Join(heads, " ") != strings.Join(want, " ") {
		t.Errorf("heads of a distilled model %v, want %v", heads, want)
	}
	if got, want := HeadPatterns(), []string{"head.*", "head_dist.*"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("HeadPatterns() = %v, want %v", got, want)
	}
}
