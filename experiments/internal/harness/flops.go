package harness

import "github.com/vitgo/vit/layers"

// Parts names the forward pass's matrix products, in the order of a table.
var Parts = []string{"patch proj", "qkv", "scores QKᵀ", "weighted sum PV", "attn proj", "MLP", "head"}

// quadratic marks the parts whose cost grows with T² (the rest grow with T
// or not at all).
var quadratic = map[string]bool{"scores QKᵀ": true, "weighted sum PV": true}

// Flops are FLOPs by part (Parts).
type Flops map[string]float64

// ForwardFLOPs is the forward matrix-product FLOPs of one image by part, counting a
// multiply-add as 2 and ignoring LayerNorm, softmax, GELU, residual adds and
// the token ops (all O(T·D)). With T = N + 1 tokens, width D, hidden width
// Dh = mlp_ratio·D, depth L, K classes:
//
//	patch proj   2·N·(C·P²)·D     = 2·C·H·W·D (independent of P)
//	qkv          L · 2·T·D·3D
//	scores QKᵀ   L · 2·T²·D        (H heads × T² × D/H)
//	PV           L · 2·T²·D
//	attn proj    L · 2·T·D²
//	MLP          L · 2·2·T·D·Dh
//	head         2·D·K             (the class token only)
func ForwardFLOPs(c layers.Config) Flops {
	n := float64(c.NumPatches())
	t := n + 1
	d, dh, l := float64(c.EmbedDim), float64(c.Hidden()), float64(c.Depth)
	cpp := float64(c.InChans * c.PatchSize * c.PatchSize)
	return Flops{
		"patch proj":      2 * n * cpp * d,
		"qkv":             l * 2 * t * d * 3 * d,
		"scores QKᵀ":      l * 2 * t * t * d,
		"weighted sum PV": l * 2 * t * t * d,
		"attn proj":       l * 2 * t * d * d,
		"MLP":             l * 2 * 2 * t * d * dh,
		"head":            2 * d * float64(c.NumClasses),
	}
}

// Total sums the parts: what vit_ref.py's forward_flops counts.
func (f Flops) Total() float64 {
	s := 0.0
	for _, v := range f {
		s += v
	}
	return s
}

// QuadShare is the fraction of the forward FLOPs in the T² parts.
func (f Flops) QuadShare() float64 {
	q := 0.0
	for p, v := range f {
		if quadratic[p] {
			q += v
		}
	}
	return q / f.Total()
}
