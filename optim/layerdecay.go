package optim

import (
	"math"
	"strings"
)

// LayerID returns the layer id timm's param_groups_layer_decay gives a ViT
// parameter, using VisionTransformer.group_matcher:
//
//	cls_token*, pos_embed*, patch_embed*  → 0
//	blocks.i.*                            → i+1
//	norm*  (the final norm)               → depth (timm's MATCH_PREV_GROUP: it joins the last block)
//	anything else (head, fc_norm, …)      → depth+1
//
// so there are depth+2 layer ids. The final norm sharing the last block's id
// is what timm does (group_with_matcher maps r'^norm' to the previous group);
// it gets lr scale decay¹, not decay⁰. A block index ≥ depth is outside the
// model; [AdamW.Step] rejects such names when layer decay is on.
func LayerID(name string, depth int) int {
	switch {
	case strings.HasPrefix(name, "cls_token"), strings.HasPrefix(name, "pos_embed"), strings.HasPrefix(name, "patch_embed"):
		return 0
	case strings.HasPrefix(name, "norm"):
		return depth
	}
	if i, ok := blockIndex(name); ok {
		return i + 1
	}
	return depth + 1
}

// blockIndex returns i for a name matching timm's r'^blocks\.(\d+)'.
func blockIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blocks.")
	if !ok {
		return 0, false
	}
	i, n := 0, 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' && i < 1<<30 {
		i = i*10 + int(rest[n]-'0')
		n++
	}
	return i, n > 0
}

// LayerScale returns the learning-rate multiplier of layer-wise decay,
// decay^(depth+1 − LayerID(name, depth)): 1 for the head, decay for the
// last block and the final norm, decay^(depth+1) for the embeddings. decay 0
// or 1 means layer decay is off and gives 1.
func LayerScale(name string, depth int, decay float64) float64 {
	if !layerDecayOn(decay) {
		return 1
	}
	return math.Pow(decay, float64(depth+1-LayerID(name, depth)))
}

func layerDecayOn(decay float64) bool { return decay != 0 && decay != 1 }
